package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/anthropic"
	"github.com/durableagent/durableagent/internal/llm/openai"
	"github.com/durableagent/durableagent/internal/settings"
)

// NewProviders returns the worker's provider registry: Anthropic, the
// OpenAI-compatible one and, on a worker whose own model.provider is
// scripted, the scripted fake (given, so the caller owns its options).
// model.baseUrl applies to model.provider only; the other real provider
// talks to its public endpoint.
//
// The fake is not served by a worker configured for a real provider: a
// starter left at its built-in default (scripted) would otherwise get
// fake answers from a production worker. Such a prompt fails at its
// first model call with ErrScriptedNotServed, naming what the worker
// serves. A worker serves scripted when model.provider says so: the
// built-in default, which only worker --dev and tests accept (see
// CheckModelProvider), or the explicit opt-in.
func NewProviders(s settings.Settings, script llm.Provider) func(name string) (llm.Provider, error) {
	baseURL := func(name string) string {
		if s.Model.Provider == name {
			return s.Model.BaseURL
		}
		return ""
	}
	providers := map[string]llm.Provider{
		"anthropic": anthropic.New(baseURL("anthropic")),
		"openai":    openai.New(baseURL("openai")),
	}
	if s.Model.Provider == ScriptedProvider {
		providers[ScriptedProvider] = script
	}
	served := strings.Join(ServedProviders(s), ", ")
	return func(name string) (llm.Provider, error) {
		if p, ok := providers[name]; ok {
			return p, nil
		}
		if name == ScriptedProvider {
			return nil, fmt.Errorf("%w: it serves %s; set the starter's model.provider "+
				"(DURABLE_AGENT_MODEL_PROVIDER or --model.provider) to %s, the worker's",
				ErrScriptedNotServed, served, s.Model.Provider)
		}
		return nil, fmt.Errorf("unknown model provider %q (this worker serves %s)", name, served)
	}
}

// ServedProviders are the providers NewProviders serves, sorted: the real
// ones, and the scripted fake on a worker whose model.provider is it.
func ServedProviders(s settings.Settings) []string {
	names := []string{"anthropic", "openai"}
	if s.Model.Provider == ScriptedProvider {
		names = append(names, ScriptedProvider) // sorts after the real ones
	}
	return names
}

// ScriptedProvider is the name of the offline fake model.
const ScriptedProvider = "scripted"

// ErrScriptedNotServed is the error of a prompt naming the scripted fake
// on a worker configured for a real provider.
var ErrScriptedNotServed = errors.New("model provider scripted (the offline fake) is not served by this worker")

// AuthPath is the auth store of the settings: <dataDir>/auth.json.
func AuthPath(s settings.Settings) string { return filepath.Join(s.DataDir, auth.FileName) }

// NewCredentials opens the auth store of the settings for the activities
// (activities.Credentials and activities.RateWindows), with
// retry.fallbackModels as the fallback models of model.provider. A
// group- or world-readable auth.json fails here, at worker start. A
// store that later cannot be read (its permissions changed under a
// running worker) fails the model call with a CredentialsError naming
// the problem, instead of running without the credential.
func NewCredentials(s settings.Settings) (*auth.File, error) {
	var opts auth.FileOptions
	if len(s.Retry.FallbackModels) > 0 {
		opts.FallbackModels = map[string][]string{s.Model.Provider: s.Retry.FallbackModels}
	}
	f, err := auth.OpenFile(AuthPath(s), opts)
	if err != nil {
		return nil, fmt.Errorf("open auth store: %w", err)
	}
	return f, nil
}
