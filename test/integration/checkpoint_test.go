package integration

import (
	"context"
	"fmt"
	"maps"
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
	"github.com/durableagent/durableagent/internal/session"
)

// checkpointFixture is the replay fixture of a prompt that takes
// checkpoints (regenerate with UPDATE_REPLAY_HISTORY=1 and -run
// CheckpointPerTurn).
var checkpointFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_checkpoint_history.json")

// Issue 42: a checkpoint at the prompt's first model call and at each one
// after a turn whose tool calls may change files (write, bash), none after
// a read-only turn; the ids in history are the store's; starter
// checkpoints lists the calls between checkpoints and the paths they
// changed, starter diff --from/--to prints the change
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
	if err != nil || len(list) != 3 || list[2].Leaf == "" {
		t.Fatalf("checkpoints %+v %v, want 3 (write's turn, bash's turn, not the read-only one; the prompt's end)", list, err)
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
			if res.ID != "" { // the run's first looks for a store first: a new session has none
				inHistory = append(inHistory, res.ID)
			}
		}
	}
	if want := []string{list[0].ID, list[1].ID, list[2].ID}; !slices.Equal(inHistory, want) {
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

// Issue 42: a session whose prompts only read makes no checkpoint store:
// its first checkpoint, which hashes every file, waits for a turn that may
// change files. Spec 20.1.
func TestIntegration_ReadOnlySessionMakesNoCheckpointStore(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		in := client.PromptInput(e.s, "readonly", "look at it")
		in.Workspace = ws
		in.Model.Faults = []string{`tool:read {"path":"a.txt"}`, `text:it says one`}
		run, err := e.k.StartPrompt(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt %d: %+v %v", i, res, err)
		}
	}
	if _, err := os.Stat(activities.CheckpointDir(e.dataDir, "readonly")); !os.IsNotExist(err) {
		t.Fatalf("a read-only session's checkpoint store: %v, want none", err)
	}
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
	// The checkpoint before the write and the one after it.
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], "checkpoint not taken: ") || strings.Contains(warnings[0], "\n") || warnings[1] != warnings[0] {
		t.Fatalf("checkpoint warnings %q, want two of one line", warnings)
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

// Issue 42: starter rewind after write, bash and edit changes (a deleted
// file, a new directory, a symlink, a binary file, a mode change) restores
// the files of the checkpoint and continues the conversation from before
// its turn; it is refused while a prompt runs and when the workspace has
// unrecorded changes (unless --force); and it is undone by rewinding to
// the checkpoint it took first. Spec 20.5.
func TestIntegration_RewindRestoresFilesAndConversation(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	orig := map[string]string{"a.txt": "one\n", "b.txt": "keep\n", "bin.dat": "\x00\xffold", "run.sh": "echo hi\n"}
	for name, text := range orig {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := client.PromptInput(e.s, "rew", "change everything")
	in.Workspace = ws
	in.Model.Faults = []string{
		`tool:write {"path":"a.txt","content":"two\n"}`,
		`tool:bash {"command":"rm b.txt; mkdir -p d/e; echo new > d/e/c.txt; ln -s a.txt link; chmod +x run.sh; printf '\\001\\002' > bin.dat"}`,
		`tool:edit {"path":"a.txt","oldText":"two","newText":"three"}`,
		`text:done`,
	}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	snapshot := func() string {
		var b strings.Builder
		_ = filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
			fi, _ := os.Lstat(p)
			data, _ := os.ReadFile(p)
			if fi.Mode()&os.ModeSymlink != 0 {
				data = []byte("link")
			}
			rel, _ := filepath.Rel(ws, p)
			fmt.Fprintf(&b, "%s %v %q\n", rel, fi.Mode(), data)
			return nil
		})
		return b.String()
	}
	after := snapshot()

	if err := os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("a person's edit"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := e.starter("rewind", "--session", "rew", "--to", "1"); code != cli.ExitUsage ||
		!strings.Contains(stderr, "1 changes no checkpoint recorded (added mine.txt") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("rewind over an unrecorded change: exit %d %q, want a one-line refusal", code, stderr)
	}
	if err := os.Remove(filepath.Join(ws, "mine.txt")); err != nil {
		t.Fatal(err)
	}
	hang := client.PromptInput(e.s, "rew", "wait")
	hang.Workspace = ws
	hang.Model.Faults = []string{"hang:60s"}
	hrun, err := e.k.StartPrompt(context.Background(), hang)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := e.starter("rewind", "--session", "rew", "--to", "1"); code != cli.ExitUsage || !strings.Contains(stderr, "session rew is running a prompt") {
		t.Fatalf("rewind while a prompt runs: exit %d %q", code, stderr)
	}
	if code, _, stderr := e.starter("abort", "--session", "rew"); code != cli.ExitOK {
		t.Fatalf("abort: %d %s", code, stderr)
	}
	_, _ = e.result(hrun)

	code, out, stderr := e.starter("rewind", "--session", "rew", "--to", "1")
	if code != cli.ExitOK || !strings.Contains(out, "is back at checkpoint 1") {
		t.Fatalf("rewind --to 1: exit %d\n%s\n%s", code, out, stderr)
	}
	for name, text := range orig {
		fi, err := os.Lstat(filepath.Join(ws, name))
		if b, _ := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != text || fi.Mode() != 0o644 {
			t.Errorf("%s after the rewind: %q %v %v, want %q 0644", name, b, fi, err, text)
		}
	}
	for _, gone := range []string{"d", "link"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); !os.IsNotExist(err) {
			t.Errorf("%s after the rewind: %v, want it gone", gone, err)
		}
	}
	store, err := session.Open(filepath.Join(e.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load("rew")
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, en := range sess.Branch(sess.LeafID()) {
		if en.Message != nil {
			roles = append(roles, string(en.Message.Role))
		}
	}
	if strings.Join(roles, ",") != "user" {
		t.Fatalf("the conversation after the rewind: %q, want the prompt's user message only", roles)
	}

	undo := out[strings.LastIndex(out, "--to ")+5 : len(out)-2]
	if code, out, stderr := e.starter("rewind", "--session", "rew", "--to", undo); code != cli.ExitOK {
		t.Fatalf("rewind --to %s (undo): exit %d\n%s\n%s", undo, code, out, stderr)
	}
	if got := snapshot(); got != after {
		t.Fatalf("workspace after the undo:\n%s\nwant:\n%s", got, after)
	}
}

// Issue 42: a worker SIGKILLed while it takes a turn's checkpoint (of a
// workspace of 20,000 files, so the first one takes a while), once the
// model's answer is in and its write waits for that checkpoint; the next
// worker takes it again, whole (it differs from the one after the write
// by the write alone), the prompt completes and its history replays.
// Spec 20.1.
func TestIntegration_SIGKILLDuringACheckpoint(t *testing.T) {
	e := newEnv(t)
	ws := t.TempDir()
	for i := range 200 {
		dir := filepath.Join(ws, fmt.Sprintf("d%03d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", j)), []byte(fmt.Sprintf("%d %d\n", i, j)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := e.spawnWorker()
	in := client.PromptInput(e.s, "ckptkill", "write it")
	in.Workspace = ws
	in.Model.Faults = []string{`tool:write {"path":"a.txt","content":"new"}`, `text:done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	store := activities.CheckpointDir(e.dataDir, "ckptkill")
	deadline := time.Now().Add(60 * time.Second)
	for {
		// The store made (internal/checkpoint's Open writes this last)
		// and the answer in: the kill lands in the Take the write waits for.
		if _, err := os.Stat(filepath.Join(store, "git", "info", "attributes")); err == nil && answered(e.events("ckptkill")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the checkpoint never started")
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err == nil {
		t.Fatal("the write ran before its turn's checkpoint: the kill did not land inside it")
	}
	e.startWorker()
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	st, err := checkpoint.Open(store, checkpoint.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := st.List(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("checkpoints %+v %v, want the turn's and the one after its write", list, err)
	}
	changes, err := st.Changes(context.Background(), ws, list[0].ID, list[1].ID)
	if err != nil || len(changes) != 1 || changes[0] != (checkpoint.Change{Path: "a.txt", Kind: "added"}) {
		t.Fatalf("the turn's checkpoint against the last: %+v %v, want a.txt added alone (a whole checkpoint)", changes, err)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), filepath.Join(t.TempDir(), "unused.json"))
}

// answered says an assistant answer's message_end is among evs.
func answered(evs []agent.Event) bool {
	return slices.ContainsFunc(evs, func(ev agent.Event) bool {
		return ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleAssistant
	})
}

// Issue 42: starter fork --at N --as S2 makes a session whose conversation
// ends before checkpoint N's turn and whose workspace holds N's files: a
// new directory, or with --worktree a git worktree of the repository on
// branch agent/S2; the fork's prompts work there; the original session and
// workspace are unchanged; an unknown session, an N out of range and an
// S2 that exists are one-line refusals. Spec 20.5a.
func TestIntegration_ForkAtACheckpoint(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	store, err := session.Open(filepath.Join(e.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	files := func(dir string) map[string]string {
		m := map[string]string{}
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if rel, _ := filepath.Rel(dir, p); err == nil && !d.IsDir() && !strings.HasPrefix(rel, ".git") {
				b, _ := os.ReadFile(p)
				m[rel] = string(b)
			}
			return nil
		})
		return m
	}
	roles := func(id string) string {
		sess, err := store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		var r []string
		for _, en := range sess.Branch(sess.LeafID()) {
			if en.Message != nil {
				r = append(r, string(en.Message.Role))
			}
		}
		return strings.Join(r, ",")
	}
	for _, git := range []bool{false, true} {
		src, ws := "plain", t.TempDir()
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("base\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if git {
			src, ws = "repo", gitRepo(t)
		}
		in := client.PromptInput(e.s, src, "change the files")
		in.Workspace = ws
		in.Model.Faults = []string{`tool:write {"path":"a.txt","content":"two\n"}`,
			`tool:bash {"command":"rm a.txt; mkdir d; echo x > d/b.txt"}`, `text:done`}
		run, err := e.k.StartPrompt(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
		wsBefore, convBefore := files(ws), roles(src)
		args := []string{"fork", "--session", src, "--at", "2", "--as", src + "2"}
		if git {
			args = append(args, "--worktree")
		}
		code, out, stderr := e.starter(args...)
		if code != cli.ExitOK || !strings.Contains(out, "at checkpoint 2") {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		fork, err := store.Load(src + "2")
		if err != nil {
			t.Fatal(err)
		}
		dir := fork.Header.Cwd
		if got := files(dir); !maps.Equal(got, map[string]string{"a.txt": "two\n"}) || dir == ws {
			t.Fatalf("the fork's workspace %s: %q, want checkpoint 2's a.txt only", dir, got)
		}
		if got := roles(src + "2"); got != "user,assistant,toolResult" {
			t.Fatalf("the fork's conversation %q, want it to end before the bash turn", got)
		}
		if !maps.Equal(files(ws), wsBefore) || roles(src) != convBefore {
			t.Fatalf("the original after the fork: %q %q, want %q %q", files(ws), roles(src), wsBefore, convBefore)
		}
		if git {
			if fork.Header.Worktree == nil || gitIn(t, dir, "rev-parse", "--abbrev-ref", "HEAD") != "agent/repo2" ||
				gitIn(t, dir, "status", "--porcelain") != "M a.txt" {
				t.Fatalf("the fork's worktree: %+v", fork.Header.Worktree)
			}
			continue
		}
		next := client.PromptInput(e.s, src+"2", "read it")
		next.Model.Faults = []string{`tool:bash {"command":"cat a.txt"}`, `text:done`}
		run, err = e.k.StartPrompt(context.Background(), next)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("a prompt in the fork: %+v %v", res, err)
		}
		sess, _ := store.Load(src + "2")
		msgs := sess.Context(sess.LeafID())
		if got := msgs[len(msgs)-2]; got.Role != agent.RoleToolResult || !strings.Contains(got.Text(), "two") {
			t.Fatalf("the fork's bash read %+v, want a.txt of checkpoint 2", got)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--session", "nosuch", "--at", "1", "--as", "x1"}, `no session "nosuch"`},
		{[]string{"--session", "plain", "--at", "9", "--as", "x2"}, "no checkpoint 9 in session plain"},
		{[]string{"--session", "plain", "--at", "1", "--as", "repo"}, "session repo exists"},
	} {
		code, _, stderr := e.starter(append([]string{"fork"}, c.args...)...)
		if code != cli.ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("fork %v: exit %d %q, want a one-line %q", c.args, code, stderr, c.want)
		}
	}
}
