package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
)

// checkpointFixture is the replay fixture of a prompt that takes
// checkpoints (regenerate with UPDATE_REPLAY_HISTORY=1 and -run
// CheckpointPerTurn).
var checkpointFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_checkpoint_history.json")

// Issue 42: a checkpoint before each turn whose tool calls may change
// files (write, bash), none before a read-only turn; the ids in history
// are the store's; starter checkpoints lists the turns with their calls
// and the paths they changed, starter diff --from/--to prints the change
// between two, and the history replays. Spec 20.1, 20.4.
func TestIntegration_CheckpointPerTurn(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := client.PromptInput(e.s, "ckpt", "change the files")
	in.Workspace = ws
	in.Model.Faults = []string{
		`tool:write {"path":"a.txt","content":"two\n"}`,
		`tools:[{"name":"read","arguments":{"path":"a.txt"}},{"name":"ls","arguments":{}}]`,
		`tool:bash {"command":"rm a.txt; mkdir d; echo x > d/b.txt"}`,
		`text:done`,
	}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	st, err := checkpoint.Open(activities.CheckpointDir(e.dataDir, "ckpt"), checkpoint.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := st.List(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("checkpoints %+v %v, want 2 (write's turn, bash's turn; not the read-only one)", list, err)
	}
	var inHistory []string
	scheduled := map[int64]bool{}
	iter := e.c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == activities.CheckpointName {
			scheduled[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			var res activities.CheckpointResult
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &res); err != nil {
				t.Fatal(err)
			}
			inHistory = append(inHistory, res.ID)
		}
	}
	if want := []string{list[0].ID, list[1].ID}; !slices.Equal(inHistory, want) {
		t.Fatalf("checkpoint ids in history %q, want the store's %q", inHistory, want)
	}

	code, out, stderr := e.starter("checkpoints", "--session", "ckpt")
	if code != cli.ExitOK || !strings.Contains(out, "1  ") || !strings.Contains(out, "write a.txt") ||
		!strings.Contains(out, "modified a.txt") || !strings.Contains(out, "removed a.txt") || !strings.Contains(out, "added d/b.txt") {
		t.Fatalf("starter checkpoints: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = e.starter("diff", "--session", "ckpt", "--from", "1", "--to", "2")
	if code != cli.ExitOK || !strings.Contains(out, "-one") || !strings.Contains(out, "+two") {
		t.Fatalf("starter diff --from 1 --to 2: exit %d\n%s\n%s", code, out, stderr)
	}
	code, _, stderr = e.starter("diff", "--session", "ckpt", "--from", "7")
	if code != cli.ExitUsage || !strings.Contains(stderr, "no checkpoint 7") {
		t.Fatalf("starter diff --from 7: exit %d %s", code, stderr)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), checkpointFixture)
}

// Issue 42: a checkpoint that cannot be taken does not fail the turn:
// the prompt goes on and says why in one checkpoint_warning event.
// Spec 20.1.
func TestIntegration_CheckpointFailureIsAWarning(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	if err := os.WriteFile(filepath.Join(e.dataDir, "checkpoints"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	in := client.PromptInput(e.s, "ckptwarn", "write it")
	in.Workspace = ws
	in.Model.Faults = []string{`tool:write {"path":"a.txt","content":"two"}`, `text:done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted || res.Text != "done" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two" {
		t.Fatalf("a.txt %q: the write did not run", b)
	}
	var warnings []string
	for _, ev := range e.events("ckptwarn") {
		if ev.Type == agent.EventCheckpointWarning {
			warnings = append(warnings, ev.Reason)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "checkpoint not taken: ") || strings.Contains(warnings[0], "\n") {
		t.Fatalf("checkpoint warnings %q, want one line", warnings)
	}
}

// Issue 42: a worker SIGKILLed while a bash command runs; the next
// worker's result for the call says its outcome is unknown and names
// what the workspace changed since the turn's checkpoint, with a diff.
// Spec 20.3.
func TestIntegration_LostBashResultCarriesWhatItChanged(t *testing.T) {
	e := newEnv(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "old.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := e.spawnWorker()
	in := client.PromptInput(e.s, "lostbash", "build it")
	in.Workspace = ws
	in.Model.Faults = []string{
		`tool:bash {"command":"echo made > made.txt; rm old.txt; sleep 60"}`,
		`text:checked`,
	}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, "old.txt")); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	e.startWorker()
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	var text string
	for _, ev := range e.events("lostbash") {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolResult != nil {
			text = ev.ToolResult.Content[0].Text
		}
	}
	for _, want := range []string{"may or may not have completed", "added made.txt", "removed old.txt", "+made"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the lost call's result lacks %q:\n%s", want, text)
		}
	}
}
