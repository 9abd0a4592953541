package cli

import (
	"strings"
	"testing"
)

// The starter dials with the environment it runs with: the Temporal
// client profile's variables (here TEMPORAL_API_KEY) come from the
// process environment, as the settings' do.
func TestCLI_ClientProfileReadsTheEnvironment(t *testing.T) {
	code, _, stderr := run(t, map[string]string{"TEMPORAL_API_KEY": "test-key-not-a-secret"}, "state", "--session", "s")
	if code != 2 || !strings.Contains(stderr, "API key") || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Fatalf("exit %d, stderr %q; want exit 2 and a dial error that says it used the API key of the environment", code, stderr)
	}
	code, _, stderr = run(t, nil, "state", "--session", "s")
	if code != 2 || strings.Contains(stderr, "API key") {
		t.Fatalf("without the variable: exit %d, stderr %q; want no API key", code, stderr)
	}
}
