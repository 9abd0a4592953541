package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/settings"
)

// Outside --dev the scripted fake must be chosen on purpose.
func TestCheckModelProvider(t *testing.T) {
	s := settings.Defaults()
	if err := CheckModelProvider(s, ""); !errors.Is(err, ErrNoModelProvider) || strings.Contains(err.Error(), "\n") {
		t.Errorf("default scripted: %v, want ErrNoModelProvider on one line", err)
	}
	if err := CheckModelProvider(s, "environment DURABLE_AGENT_MODEL_PROVIDER"); err != nil {
		t.Errorf("explicit scripted: %v", err)
	}
	s.Model.Provider = "anthropic"
	if err := CheckModelProvider(s, "/etc/agent.yaml:3"); err != nil {
		t.Errorf("anthropic: %v", err)
	}
}
