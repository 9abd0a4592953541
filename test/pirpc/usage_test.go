package pirpc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// Issue 24, streaming usage, without Node: the lines `starter rpc` writes
// (pi 1.6's protocol), read as they come. The scripted model reports
// usage mid-stream (a usage: element: input and cache counts before the
// first word, the whole usage after the last) and the model is priced:
// every text_delta's top-level usage carries the reported input and cache
// counts, the output so far and their cost at the model's prices, some
// before the final output count; done and message_end carry the final
// usage. pi16/driver.mjs asserts the same through pi 1.6.0's RpcClient;
// this test runs where that one is skipped (no npm).
func TestStarterRPC_MessageUpdateCarriesStreamingUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	s := startStack(t)
	price := agent.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	reported := agent.Usage{Input: 1200, CacheRead: 800, CacheWrite: 50, Output: 500}
	answer := "The usage streams: " + strings.Repeat("word ", 30) + "end."
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "rpc", "--session", "usage-raw",
		"--data-dir", s.DataDir,
		"--temporal.address", s.Temporal.Address,
		"--temporal.namespace", s.Temporal.Namespace,
		"--temporal.taskQueue", s.Temporal.TaskQueue,
		"--scripted.faults", fmt.Sprintf(`usage:{"input":%d,"cacheRead":%d,"cacheWrite":%d,"output":%d} text:%s`,
			reported.Input, reported.CacheRead, reported.CacheWrite, reported.Output, answer),
		"--model.prices", fmt.Sprintf("scripted/scripted-1=%g,%g,%g,%g", price.Input, price.Output, price.CacheRead, price.CacheWrite))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), starterEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("starter rpc stderr:\n%s", stderr.String())
		}
	})
	lines := make(chan []byte, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	if _, err := io.WriteString(stdin, `{"id":"1","type":"prompt","message":"how much did that cost"}`+"\n"); err != nil {
		t.Fatal(err)
	}

	// line is the part of a line this test reads.
	type line struct {
		Type                  string         `json:"type"`
		Success               *bool          `json:"success"`
		Error                 string         `json:"error"`
		EntryID               string         `json:"entryId"`
		Message               *agent.Message `json:"message"`
		Usage                 *agent.Usage   `json:"usage"`
		AssistantMessageEvent *struct {
			Type string `json:"type"`
		} `json:"assistantMessageEvent"`
	}
	var evs []line
	timeout := time.After(90 * time.Second)
read:
	for {
		select {
		case b, ok := <-lines:
			if !ok {
				t.Fatalf("starter rpc ended before agent_settled")
			}
			var l line
			if err := json.Unmarshal(b, &l); err != nil {
				t.Fatalf("line %s: %v", b, err)
			}
			if l.Type == "response" && (l.Success == nil || !*l.Success) {
				t.Fatalf("prompt answered %s", b)
			}
			evs = append(evs, l)
			if l.Type == "agent_settled" {
				break read
			}
		case <-timeout:
			t.Fatalf("no agent_settled within 90 s; %d lines", len(evs))
		}
	}

	want := reported.Priced(price)
	end := -1
	for i, e := range evs {
		if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleAssistant {
			if end >= 0 {
				t.Fatal("two assistant message_end")
			}
			end = i
		}
	}
	if end < 0 || evs[end].Message.Usage == nil || *evs[end].Message.Usage != want {
		t.Fatalf("assistant message_end usage %+v, want the final report priced %+v", evs[end].Message.Usage, want)
	}
	entry := evs[end].EntryID
	var deltas, mid int
	var done *agent.Usage
	lastOut := 0
	for i, e := range evs {
		if e.Type != agent.EventMessageUpdate || e.EntryID != entry || e.AssistantMessageEvent == nil {
			continue
		}
		if i > end {
			t.Fatalf("message_update after message_end: %+v", e)
		}
		switch e.AssistantMessageEvent.Type {
		case "done":
			done = e.Usage
		case agent.DeltaText:
			deltas++
			u := e.Usage
			if u == nil {
				t.Fatalf("text_delta %d without usage", deltas)
			}
			so := agent.Usage{Input: reported.Input, CacheRead: reported.CacheRead, CacheWrite: reported.CacheWrite, Output: u.Output}.Priced(price)
			if *u != so || u.Output <= 0 || u.Output > reported.Output || u.Output < lastOut {
				t.Fatalf("text_delta %d usage %+v, want the reported input and cache, a growing output so far and their cost %+v", deltas, *u, so)
			}
			lastOut = u.Output
			if u.Output < reported.Output {
				mid++
			}
		}
	}
	if deltas < 2 || mid == 0 {
		t.Fatalf("%d text_delta, %d before the final output count: want the answer streamed with its usage so far", deltas, mid)
	}
	if done == nil || *done != want {
		t.Fatalf("done usage %+v, want %+v", done, want)
	}
	t.Logf("%d text_delta lines, %d with the usage so far before the final count", deltas, mid)
}
