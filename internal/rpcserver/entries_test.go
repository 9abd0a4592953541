package rpcserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/session"
)

// pi 1.6's get_entries (with since) and get_tree.
func TestServe_GetEntriesAndTree(t *testing.T) {
	// A session with a fork: a, b, then c and d both children of b.
	at := time.Date(2026, 12, 4, 7, 0, 0, 0, time.UTC)
	msg := func(text string) *agent.Message {
		return &agent.Message{Role: agent.RoleUser, Content: []agent.ContentBlock{{Type: "text", Text: text}}}
	}
	b := offline(t)
	sessionFile(t, b,
		session.Entry{Type: session.TypeMessage, ID: "a", Timestamp: at, Message: msg("one")},
		session.Entry{Type: session.TypeMessage, ID: "b", ParentID: "a", Timestamp: at, Message: msg("two")},
		session.Entry{Type: session.TypeMessage, ID: "c", ParentID: "b", Timestamp: at, Message: msg("three")},
		session.Entry{Type: session.TypeMessage, ID: "d", ParentID: "b", Timestamp: at, Message: msg("other three")})
	h := serve(t, &rpcserver.Server{Backend: b})
	ids := func(raw string) string {
		var out []string
		for _, part := range strings.Split(raw, `"id":"`)[1:] {
			out = append(out, part[:strings.IndexByte(part, '"')])
		}
		return strings.Join(out, ",")
	}
	h.send(`{"id":"1","type":"get_entries"}`)
	if r := h.response(); !r.Success || ids(string(r.Data)) != "a,b,c,d" || !strings.HasSuffix(string(r.Data), `"leafId":"d"}`) {
		t.Errorf("get_entries = %+v %s", r, r.Data)
	}
	h.send(`{"id":"2","type":"get_entries","since":"b"}`)
	if r := h.response(); ids(string(r.Data)) != "c,d" || !strings.Contains(string(r.Data), `"parentId":"b"`) {
		t.Errorf("get_entries since b = %s", r.Data)
	}
	h.send(`{"id":"3","type":"get_entries","since":"zz"}`)
	if r := h.response(); r.Success || r.Error != "Entry not found: zz" {
		t.Errorf("get_entries since an unknown id = %+v", r)
	}
	h.send(`{"id":"4","type":"get_tree"}`)
	r := h.response()
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
