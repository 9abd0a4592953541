package app

import (
	"errors"

	"github.com/durableagent/durableagent/internal/settings"
)

// ErrNoModelProvider is CheckModelProvider's refusal.
var ErrNoModelProvider = errors.New("no model provider configured: set model.provider to anthropic or openai " +
	"(DURABLE_AGENT_MODEL_PROVIDER, --model.provider or the settings file), or set it to scripted on purpose " +
	"to answer with the offline fake; only worker --dev defaults to the fake")

// CheckModelProvider refuses a worker for a real cluster (not --dev) whose
// model.provider is scripted only because nothing else was configured: it
// would answer every prompt with the scripted fake. source is where
// model.provider came from (settings.Source; "" for the built-in
// default). Setting model.provider: scripted explicitly is the opt-in.
func CheckModelProvider(s settings.Settings, source string) error {
	if s.Model.Provider == "scripted" && source == "" {
		return ErrNoModelProvider
	}
	return nil
}
