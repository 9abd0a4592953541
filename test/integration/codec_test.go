package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/codec"
)

// Security: with a codec key configured, the prompt's payloads are
// encrypted at rest in Temporal. A client without the key sees no byte of
// the user's message (nor of the answer quoting it) anywhere in the
// history, every input payload names the key id, the client with the key
// reads the result, and the codec HTTP handler decodes the raw payloads.
func TestIntegration_CodecEncryptsHistoryAtRest(t *testing.T) {
	e := newEnv(t)
	keyFile := filepath.Join(t.TempDir(), "codec.key")
	key := bytes.Repeat([]byte{0x5a}, codec.KeySize)
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	e.s.Codec.KeyFile, e.s.Codec.KeyID = keyFile, "it-key"

	ctx := context.Background()
	cc, err := client.Dial(ctx, e.s, quiet()) // with the codec
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	w, err := app.NewWorker(cc, e.s)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	const marker = "PLAINTEXT-MARKER-7f3a: rotate the production database password"
	k := &client.Controller{Client: cc, TaskQueue: e.s.Temporal.TaskQueue}
	in := client.PromptInput(e.s, "enc", marker)
	in.Model.Faults = []string{e503} // a retry too: the timer's summary is a payload
	run, err := k.StartPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Result(ctx, run)
	if err != nil || res.Status != agent.StatusCompleted || !strings.Contains(res.Text, marker) {
		t.Fatalf("result with the key: %+v, %v; want completed, quoting the message", res, err)
	}

	// e.c was dialled before the key was set: it has no codec.
	iter := e.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	if len(events) < 10 {
		t.Fatalf("history has %d events, expected a full prompt with a retry", len(events))
	}
	needles := [][]byte{[]byte("PLAINTEXT-MARKER"), []byte("production database")}
	for _, ev := range events {
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range needles {
			if bytes.Contains(raw, n) {
				t.Fatalf("event %d (%s) holds plaintext %q", ev.GetEventId(), ev.GetEventType(), n)
			}
		}
	}

	start := events[0].GetWorkflowExecutionStartedEventAttributes()
	input := start.GetInput().GetPayloads()
	if len(input) != 1 {
		t.Fatalf("start event input has %d payloads", len(input))
	}
	md := input[0].GetMetadata()
	if string(md[codec.MetadataEncoding]) != codec.EncodingEncrypted || string(md[codec.MetadataKeyID]) != "it-key" {
		t.Fatalf("input payload metadata %q, want encoding %s and key id it-key", md, codec.EncodingEncrypted)
	}
	if s := events[0].GetUserMetadata().GetSummary(); s == nil || string(s.GetMetadata()[codec.MetadataEncoding]) != codec.EncodingEncrypted {
		t.Fatalf("the workflow summary (it quotes the message) is not encrypted: %v", s)
	}

	// What the Web UI does: post the raw payloads to <endpoint>/decode.
	kk, err := codec.NewKey("it-key", key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(codec.Handler(codec.New(kk), nil))
	defer srv.Close()
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: input})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL+"/decode", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("codec server answer %d %s", resp.StatusCode, out)
	}
	var decoded commonpb.Payloads
	if err := protojson.Unmarshal(out, &decoded); err != nil || !strings.Contains(string(decoded.Payloads[0].GetData()), marker) {
		t.Fatalf("decoded input %v, %v; want the user message", &decoded, err)
	}
}
