package compaction

import (
	"strings"
	"testing"
)

func TestDefaultSettings_MatchSpec(t *testing.T) {
	want := Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000, AutoContinue: true}
	if got := DefaultSettings(); got != want {
		t.Errorf("DefaultSettings() = %+v, want %+v", got, want)
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Errorf("DefaultSettings().Validate() = %v, want nil", err)
	}
}

func TestSettingsValidate_RejectsNegativesNamingTheKey(t *testing.T) {
	tests := []struct {
		name    string
		s       Settings
		wantErr string // "" for valid
	}{
		{"zero values are valid", Settings{}, ""},
		{"negative reserve", Settings{ReserveTokens: -1, KeepRecentTokens: 20000}, "compaction.reserveTokens must be >= 0, got -1"},
		{"negative keep", Settings{ReserveTokens: 16384, KeepRecentTokens: -5}, "compaction.keepRecentTokens must be >= 0, got -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestMessages_TellTheUserWhatToDo(t *testing.T) {
	if OverflowRecoveryFailed != "Context overflow recovery failed after one compact-and-retry attempt" {
		t.Errorf("OverflowRecoveryFailed = %q", OverflowRecoveryFailed)
	}
	for _, want := range []string{"compaction.enabled is false", "compaction.enabled=true", "new session"} {
		if !strings.Contains(OverflowCompactionDisabled, want) {
			t.Errorf("OverflowCompactionDisabled = %q, want it to contain %q", OverflowCompactionDisabled, want)
		}
	}
}
