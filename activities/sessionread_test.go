package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// A client reads the workers' store in pages of at most
// MaxReadPageBytes (an entry bigger than that alone): the pages together
// are the session, in order; one entry, the header, the summaries and a
// missing session are one read each; bad input is refused.
func TestReadSession_BoundedPagesAndSingleReads(t *testing.T) {
	store, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	acts := &Activities{Sessions: store}
	if _, err := store.Init("s1", session.Header{Cwd: "/ws", Host: "host-a"}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", MaxReadPageBytes/2)
	var want []string
	for i, text := range []string{"ask", big, big, big, strings.Repeat("y", MaxReadPageBytes+1), "done"} {
		m := agent.TextMessage(agent.RoleUser, text)
		id := string(rune('a' + i))
		want = append(want, id)
		if _, err := store.Append("s1", session.Entry{Type: session.TypeMessage, ID: id, Timestamp: time.Now(), Message: &m}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var got []string
	pages := 0
	for after := 0; ; pages++ {
		page, err := acts.ReadSession(ctx, ReadSessionInput{SessionID: "s1", After: after})
		if err != nil || !page.Found || (after == 0) != (page.Header != nil) {
			t.Fatalf("page after %d: %+v %v", after, page.Header, err)
		}
		size := 0
		for _, e := range page.Entries {
			got = append(got, e.ID)
			size += len(e.Message.Text())
		}
		if size > MaxReadPageBytes && len(page.Entries) > 1 {
			t.Fatalf("page after %d holds %d bytes in %d entries", after, size, len(page.Entries))
		}
		if after = page.Next; after == 0 {
			break
		}
	}
	if strings.Join(got, "") != strings.Join(want, "") || pages < 4 {
		t.Fatalf("entries %v in %d pages, want %v in at least 4", got, pages+1, want)
	}

	if page, err := acts.ReadSession(ctx, ReadSessionInput{SessionID: "s1", EntryID: "f"}); err != nil || len(page.Entries) != 1 || page.Entries[0].Message.Text() != "done" {
		t.Fatalf("entry f: %+v %v", page, err)
	}
	if page, err := acts.ReadSession(ctx, ReadSessionInput{SessionID: "s1", HeaderOnly: true}); err != nil || page.Header == nil || page.Header.Host != "host-a" || len(page.Entries) != 0 {
		t.Fatalf("header: %+v %v", page, err)
	}
	if page, err := acts.ReadSession(ctx, ReadSessionInput{SessionID: "nope"}); err != nil || page.Found {
		t.Fatalf("missing session: %+v %v", page, err)
	}
	page, err := acts.ReadSession(ctx, ReadSessionInput{})
	if err != nil || len(page.Summaries) != 1 || page.Summaries[0].Header.Cwd != "/ws" || page.Summaries[0].LastPrompt != "done" {
		t.Fatalf("summaries: %+v %v", page.Summaries, err)
	}
	for _, in := range []ReadSessionInput{{After: -1}, {EntryID: "a"}, {SessionID: "../x"}} {
		if _, err := acts.ReadSession(ctx, in); err == nil || !strings.Contains(err.Error(), "invalid session read") {
			t.Errorf("%+v: %v", in, err)
		}
	}
}
