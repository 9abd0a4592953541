package e2e

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/rpc"
)

// The RPC commands that read a session (get_entries, get_tree,
// get_session_stats) read it through the package's worker: the tests
// write the worker's store and serve an in-process rpcserver.

// sessionServer is an in-process RPC server on a new session holding
// entries in the worker's store.
func sessionServer(t *testing.T, name string, entries ...session.Entry) *proc {
	t.Helper()
	s := server(t)
	id := testserver.Session(name)
	store, err := session.Open(filepath.Join(s.DataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Init(id, session.Header{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(id, entries...); err != nil {
		t.Fatal(err)
	}
	k, err := client.NewController(env.stack.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.Open(k, s, id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := (&rpcserver.Server{Backend: b}).Serve(ctx, inR, outW)
		outW.Close()
		served <- err
	}()
	return newProc(t, inW, outR, func() error { return <-served }, func() { inR.Close() })
}

// pi 1.6's get_entries (with since) and get_tree.
func TestRPC_GetEntriesAndTree(t *testing.T) {
	// A session with a fork: a, b, then c and d both children of b.
	at := time.Date(2026, 12, 4, 7, 0, 0, 0, time.UTC)
	msg := func(text string) *agent.Message {
		return &agent.Message{Role: agent.RoleUser, Content: []agent.ContentBlock{{Type: "text", Text: text}}}
	}
	h := sessionServer(t, "e2e-entries",
		session.Entry{Type: session.TypeMessage, ID: "a", Timestamp: at, Message: msg("one")},
		session.Entry{Type: session.TypeMessage, ID: "b", ParentID: "a", Timestamp: at, Message: msg("two")},
		session.Entry{Type: session.TypeMessage, ID: "c", ParentID: "b", Timestamp: at, Message: msg("three")},
		session.Entry{Type: session.TypeMessage, ID: "d", ParentID: "b", Timestamp: at, Message: msg("other three")})
	ids := func(raw string) string {
		var out []string
		for _, part := range strings.Split(raw, `"id":"`)[1:] {
			out = append(out, part[:strings.IndexByte(part, '"')])
		}
		return strings.Join(out, ",")
	}
	h.sendRaw(`{"id":"1","type":"get_entries"}`)
	if r := h.response("1"); !r.Success || ids(string(r.Data)) != "a,b,c,d" || !strings.HasSuffix(string(r.Data), `"leafId":"d"}`) {
		t.Errorf("get_entries = %+v %s", r, r.Data)
	}
	h.sendRaw(`{"id":"2","type":"get_entries","since":"b"}`)
	if r := h.response("2"); ids(string(r.Data)) != "c,d" || !strings.Contains(string(r.Data), `"parentId":"b"`) {
		t.Errorf("get_entries since b = %s", r.Data)
	}
	h.sendRaw(`{"id":"3","type":"get_entries","since":"zz"}`)
	if r := h.response("3"); r.Success || r.Error != "Entry not found: zz" {
		t.Errorf("get_entries since an unknown id = %+v", r)
	}
	h.sendRaw(`{"id":"4","type":"get_tree"}`)
	r := h.response("4")
	tree := decode[struct {
		Tree []struct {
			Entry    struct{ ID string }
			Children []struct {
				Entry    struct{ ID string }
				Children []struct{ Entry struct{ ID string } }
			}
		}
		LeafID string
	}](t, r)
	if len(tree.Tree) != 1 || tree.Tree[0].Entry.ID != "a" || len(tree.Tree[0].Children) != 1 ||
		len(tree.Tree[0].Children[0].Children) != 2 || tree.Tree[0].Children[0].Children[1].Entry.ID != "d" || tree.LeafID != "d" {
		t.Errorf("get_tree = %s", r.Data)
	}
}

// Issue 22: get_session_stats has the session's usage, a failed attempt
// (left out of the run context) included, beside the run context's
// tokens and cost.
func TestRPC_SessionStatsUsageCountsFailedAttempts(t *testing.T) {
	now := time.Now().UTC()
	user := agent.TextMessage(agent.RoleUser, "hi")
	failed := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, ErrorMessage: "stream cut",
		Usage: &agent.Usage{Input: 100, Output: 10, Cost: agent.UsageCost{Total: 0.11}}}
	answer := agent.TextMessage(agent.RoleAssistant, "hello")
	answer.StopReason = agent.StopReasonStop
	answer.Usage = &agent.Usage{Input: 100, Output: 20, CacheRead: 5, Cost: agent.UsageCost{Total: 0.12}}
	h := sessionServer(t, "e2e-stats",
		session.Entry{Type: session.TypeMessage, ID: "u1", Timestamp: now, Message: &user},
		session.Entry{Type: session.TypeMessage, ID: "a1", ParentID: "u1", Timestamp: now, Message: &failed},
		session.Entry{Type: session.TypeMessage, ID: "a2", ParentID: "u1", Timestamp: now, Message: &answer})
	h.sendRaw(`{"id":"1","type":"get_session_stats"}`)
	st := decode[rpc.SessionStats](t, h.response("1"))
	want := agent.Spend{Input: 200, Output: 30, CacheRead: 5, CostUsd: 0.23}
	if st.Usage != want || st.Tokens.Input != 100 || st.Cost != 0.12 {
		t.Fatalf("stats usage %+v tokens %+v cost %v, want usage %+v and the run context's 100 input tokens, $0.12", st.Usage, st.Tokens, st.Cost, want)
	}
}
