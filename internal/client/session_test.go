package client

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/settings"
)

func loadSettings(t *testing.T, dataDir string) settings.Settings {
	t.Helper()
	t.Setenv(settings.EnvHome, dataDir)
	t.Setenv("HOME", dataDir)
	s, err := settings.Load(settings.LoadOptions{})
	if err != nil {
		t.Fatalf("load settings: %v", err)
	}
	return s
}

// set_auto_compaction persists compaction.enabled in the settings file:
// a later Load (the next prompt, another process) reads it.
func TestSession_SetAutoCompactionPersists(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(&Controller{}, loadSettings(t, dir), "s1")
	if err != nil {
		t.Fatal(err)
	}
	for _, enabled := range []bool{false, true, false} {
		if err := b.SetAutoCompaction(context.Background(), enabled); err != nil {
			t.Fatalf("SetAutoCompaction(%t): %v", enabled, err)
		}
		if got := loadSettings(t, dir).Compaction.Enabled; got != enabled {
			t.Errorf("after SetAutoCompaction(%t) the file says %t", enabled, got)
		}
	}
	if s := loadSettings(t, dir); !s.Retry.Enabled || s.Compaction.KeepRecentTokens != 20000 {
		t.Errorf("other settings changed: %+v", s)
	}
}

// With session.store postgres a switch_session by file path is refused
// from the settings alone, before any read: sessions are not files there.
func TestSession_SwitchByPathWithPostgres(t *testing.T) {
	dir := t.TempDir()
	s := loadSettings(t, dir)
	s.Session.Store = settings.SessionStorePostgres
	b, err := Open(&Controller{}, s, "pg1")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SwitchSession(context.Background(), filepath.Join(dir, "sessions", "pg1.jsonl")); err == nil || !strings.Contains(err.Error(), "sessions live in PostgreSQL") {
		t.Fatalf("switch by file = %v", err)
	}
}

// set_thinking_level refuses a level that is not one of llm.ThinkingLevels
// ("" included) in one line naming the level and the choices.
func TestSession_SetThinkingLevelRefusesUnknownLevel(t *testing.T) {
	for _, level := range []string{"maximum", ""} {
		err := (&Session{}).SetThinkingLevel(context.Background(), level)
		want := `invalid thinking level "` + level + `" (want one of off, minimal, low, medium, high, xhigh, max)`
		if err == nil || err.Error() != want {
			t.Errorf("SetThinkingLevel(%q) = %v, want %s", level, err, want)
		}
	}
}
