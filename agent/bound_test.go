package agent

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// Issue 20 item 8: a shortened text is the start of the text and a note
// naming the entry, and its JSON (HTML escapes included) is within the
// limit whatever characters it holds; a text within the limit is kept.
// Spec 10.4.
func TestShortenText_JSONWithinTheLimit(t *testing.T) {
	for _, tc := range []struct{ name, s string }{
		{"plain", strings.Repeat("plain words ", 20000)},
		{"html escapes", strings.Repeat("<a href=\"x\">&amp;</a>\n", 10000)},
		{"control characters", strings.Repeat("\x01\x02\t\x7f", 30000)},
		{"multi-byte", strings.Repeat("日本語のテキスト\u2028", 10000)},
		{"invalid UTF-8", strings.Repeat("ok\xff\xfe", 30000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 4096
			got := ShortenText(tc.s, limit, "abc-001")
			b, _ := json.Marshal(got)
			note := strings.LastIndex(got, "\n[… ")
			if len(b) > limit || note < 0 || !strings.HasPrefix(tc.s, got[:note]) ||
				!strings.HasSuffix(got, " more bytes: the whole message is session entry abc-001]") {
				t.Fatalf("%d bytes of JSON (limit %d), ends %q", len(b), limit, got[max(0, len(got)-80):])
			}
			if note < limit/8 {
				t.Fatalf("kept %d bytes of the text under a %d-byte limit", note, limit)
			}
		})
	}
	if s := strings.Repeat("<", 100); ShortenText(s, 4096, "x") != s {
		t.Fatal("a text within the limit was changed")
	}
}

// Issue 20 item 8: an event with a 1.9 MB message and a 1 MB image is
// within MaxEventBytes once bounded, and the message it points to (the
// workflow's own state) is left whole; a small event is kept as it is.
// Spec 10.4.
func TestBoundEvent_BigMessageBecomesAPreview(t *testing.T) {
	user := TextMessage(RoleUser, strings.Repeat("line of a huge prompt <with> \"quotes\"\n", 50000))
	user.Content = append(user.Content, ContentBlock{Type: BlockImage, MimeType: "image/png",
		Data: base64.StdEncoding.EncodeToString(make([]byte, 750_000))})
	text := user.Text()
	e := Event{Type: EventMessageEnd, Seq: 4, EntryID: "abc-001", Message: &user}
	got, size := BoundEventSized(e)
	if size != EncodedSize(got) {
		t.Fatalf("BoundEventSized says %d bytes, the event encodes to %d", size, EncodedSize(got))
	}
	if n := EncodedSize(got); n > MaxEventBytes {
		t.Fatalf("bounded event is %d bytes of JSON, above %d", n, MaxEventBytes)
	}
	if user.Text() != text || len(user.Content) != 2 || user.Content[1].Type != BlockImage {
		t.Fatal("BoundEventSized changed the message it was given")
	}
	if !strings.Contains(got.Message.Text(), "the whole message is session entry abc-001]") ||
		!strings.Contains(got.Message.Text(), "[image/png image, 1000000 bytes of base64, left out of the event: the whole message is session entry abc-001]") {
		t.Fatalf("preview does not say what was left out: ends %q", got.Message.Text()[max(0, len(got.Message.Text())-300):])
	}

	small := Event{Type: EventMessageEnd, Seq: 4, EntryID: "abc-001", Message: &Message{Role: RoleUser, Content: []ContentBlock{{Type: BlockText, Text: "hi"}}}}
	if b, _ := BoundEventSized(small); b.Message != small.Message {
		t.Fatal("a small event was copied or changed")
	}
}

// The client measures a page as the workflow does: an event read back
// from the events query's JSON has the size the workflow counted.
// Spec 10.4.
func TestEncodedSize_SameAfterARoundTrip(t *testing.T) {
	user := TextMessage(RoleUser, strings.Repeat("<x> & \"y\"\n", 1000))
	for _, e := range []Event{
		{Type: EventMessageEnd, Seq: 3, EntryID: "a-1", Message: &user},
		{Type: EventToolExecutionEnd, Seq: 9, EntryID: "a-2", ToolCallID: "c1", ToolName: "bash",
			ToolResult: &ToolResult{Content: []ContentBlock{{Type: BlockText, Text: "out<put>"}}, Details: map[string]any{"truncated": true, "bytes": 12345}}},
		{Type: EventAutoRetryStart, Seq: 5, Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "503 <html>"},
	} {
		b, _ := json.Marshal(e)
		var back Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if EncodedSize(back) != EncodedSize(e) {
			t.Fatalf("%s: %d bytes read back, %d written", e.Type, EncodedSize(back), EncodedSize(e))
		}
	}
}

// A page the events query may have cut (its JSON above
// EventsPageBytes-MaxEventBytes) says more may follow; a smaller page, or
// none, says it holds every event there was.
func TestPageMayContinue_BySizeOfThePage(t *testing.T) {
	ev := func(n int) Event {
		return Event{Type: EventMessageEnd, Message: &Message{Role: RoleUser, Content: []ContentBlock{{Type: BlockText, Text: strings.Repeat("x", n)}}}}
	}
	threshold := EventsPageBytes - MaxEventBytes
	small := []Event{ev(100), ev(100)}
	var big []Event
	for EncodedSize(big) <= threshold {
		big = append(big, ev(MaxEventBytes/2))
	}
	if PageMayContinue(nil) || PageMayContinue(small) {
		t.Fatal("an empty or small page may continue")
	}
	if !PageMayContinue(big) || PageMayContinue(big[:len(big)-1]) {
		t.Fatalf("page of %d events (%d bytes): want may continue only above %d bytes", len(big), EncodedSize(big), threshold)
	}
}
