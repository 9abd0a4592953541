package main

// The caching benchmark (issue 39): a 30-turn job (29 bash calls, then an
// answer) of the real worker against a local server that speaks the
// Anthropic Messages API (the product's anthropic provider, its SDK, the
// wire format) and bills each request by Anthropic's prompt-cache rules:
//
//   - a request's prefix is its tools, system blocks and message blocks in
//     that order; a block with cache_control is a breakpoint;
//   - a hit is the longest prefix ending at a breakpoint or at one of the
//     20 blocks before it that an earlier request wrote: those tokens are
//     cache_read_input_tokens (billed 0.1x the input price);
//   - the tokens after the hit up to the last breakpoint are written,
//     cache_creation_input_tokens (1.25x), when that prefix reaches the
//     1024-token minimum; every breakpoint's prefix is stored;
//   - the rest is input_tokens (1x).
//
// Without caching is the same job with the breakpoints ignored: every
// token is input, which is what the product paid before it sent any.
// Tokens are estimated as 4 bytes of a block's JSON (cache_control
// removed) each: both runs count the same way. The product's own report
// (the prompt's usage) must match the server's bill token for token.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

const (
	cachingTurns    = 30
	cacheMinTokens  = 1024 // Anthropic's minimum cacheable prefix (Sonnet)
	cacheLookback   = 20   // blocks before a breakpoint checked for a hit
	cachingModel    = "claude-sonnet-4-5"
	cachingToolArgs = `{"command":"seq 100001 100600"}` // 4.2 KB of output a turn
)

// CacheBill is what one run's requests were billed.
type CacheBill struct {
	Requests   int   `json:"requests"`
	Input      int64 `json:"input"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Output     int64 `json:"output"`
	// Billed is input + 1.25 cacheWrite + 0.1 cacheRead: input tokens at
	// the input price.
	Billed float64 `json:"billedInput"`
	// CostUsd is what the product reported the job cost (the model's
	// price in the embedded table).
	CostUsd float64 `json:"costUsd"`
}

// CachingResult compares the job with and without prompt caching.
type CachingResult struct {
	Turns   int       `json:"turns"`
	With    CacheBill `json:"with"`
	Without CacheBill `json:"without"`
	// Ratio is With.Billed / Without.Billed.
	Ratio float64 `json:"ratio"`
}

func (c *CachingResult) rows() []Row {
	bill := func(b CacheBill) string {
		return fmt.Sprintf("%.0f (input %d, cache writes %d, cache reads %d; $%s)", b.Billed, b.Input, b.CacheWrite, b.CacheRead, agent.FormatUsd(b.CostUsd))
	}
	return []Row{{"caching billed input",
		fmt.Sprintf("%d-turn job, Anthropic wire format: billed input tokens with caching %s vs without %s = %.3fx",
			c.Turns, bill(c.With), bill(c.Without), c.Ratio),
		"(issue 39: less with caching)", verdict(c.Ratio < 1)}}
}

// cacheServer is the local Messages API (package comment).
type cacheServer struct {
	honor bool
	mu    sync.Mutex
	cache map[[32]byte]bool
	bill  CacheBill
}

// block is one element of the prefix: its chained hash, its tokens and
// whether it is a breakpoint.
type block struct {
	key    [32]byte
	tokens int
	bp     bool
}

func (s *cacheServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		System   []json.RawMessage `json:"system"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var blocks []block
	var chain [32]byte
	add := func(tag string, raw json.RawMessage) {
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw, &fields)
		_, bp := fields["cache_control"]
		delete(fields, "cache_control")
		b, _ := json.Marshal(fields)
		chain = sha256.Sum256(bytes.Join([][]byte{chain[:], []byte(tag), b}, []byte{0}))
		blocks = append(blocks, block{key: chain, tokens: (len(b) + 3) / 4, bp: bp})
	}
	for _, t := range req.Tools {
		add("tool", t)
	}
	for _, b := range req.System {
		add("system", b)
	}
	turn := 1
	for i, m := range req.Messages {
		for _, b := range m.Content {
			add(fmt.Sprintf("%d:%s", i, m.Role), b)
		}
		if m.Role == "assistant" {
			turn++
		}
	}

	s.mu.Lock()
	input, read, write := s.account(blocks)
	s.bill.Requests++
	s.bill.Input += int64(input)
	s.bill.CacheRead += int64(read)
	s.bill.CacheWrite += int64(write)
	s.bill.Output += 20
	s.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(typ, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data) }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_%d","type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"stop_sequence":null,`+
		`"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`, turn, cachingModel, input, write, read))
	stop := "end_turn"
	if turn < cachingTurns {
		stop = "tool_use"
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_%02d","name":"bash","input":{}}}`, turn))
		args, _ := json.Marshal(cachingToolArgs)
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%s}}`, args))
	} else {
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":20}}`, stop))
	ev("message_stop", `{"type":"message_stop"}`)
}

// account bills one request (package comment) and stores its
// breakpoints' prefixes.
func (s *cacheServer) account(blocks []block) (input, read, write int) {
	prefix := make([]int, len(blocks)+1) // prefix[i]: tokens of blocks[:i]
	for i, b := range blocks {
		prefix[i+1] = prefix[i] + b.tokens
	}
	total := prefix[len(blocks)]
	if !s.honor {
		return total, 0, 0
	}
	hit, last := -1, -1
	for i, b := range blocks {
		if !b.bp {
			continue
		}
		for j := i; j >= 0 && j >= i-cacheLookback; j-- {
			if s.cache[blocks[j].key] {
				hit = max(hit, j)
				break
			}
		}
		if prefix[i+1] >= cacheMinTokens {
			last = i
			s.cache[b.key] = true
		}
	}
	read = prefix[hit+1]
	if last > hit {
		write = prefix[last+1] - read
	}
	return total - read - write, read, write
}

// cachingBench runs the job with and without caching.
func (h *harness) cachingBench(ctx context.Context) (*CachingResult, error) {
	res := &CachingResult{Turns: cachingTurns}
	for _, honor := range []bool{true, false} {
		b, err := h.cachingJob(ctx, honor)
		if err != nil {
			return nil, err
		}
		if honor {
			res.With = b
		} else {
			res.Without = b
		}
	}
	res.Ratio = res.With.Billed / res.Without.Billed
	return res, nil
}

// cachingJob runs the job once, the server honoring cache_control or not.
func (h *harness) cachingJob(ctx context.Context, honor bool) (CacheBill, error) {
	srv := &cacheServer{honor: honor, cache: map[[32]byte]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return CacheBill{}, err
	}
	hs := &http.Server{Handler: srv}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()

	name := fmt.Sprintf("caching-%t", honor)
	s := h.scenario(name)
	s.Model.Provider, s.Model.Name, s.Model.BaseURL = "anthropic", cachingModel, "http://"+ln.Addr().String()
	s.Compaction.Enabled = false
	// The worker's credential (the local server reads none).
	if err := os.Setenv("ANTHROPIC_API_KEY", "sk-ant-bench-local-0000"); err != nil {
		return CacheBill{}, err
	}
	w, err := startChild(ctx, s)
	if err != nil {
		return CacheBill{}, err
	}
	defer w.stop()
	workspace := filepath.Join(h.dir, name)
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return CacheBill{}, err
	}
	in := client.PromptInput(s, name, "list the numbers, 29 times")
	in.Workspace = workspace
	run, err := h.startInput(ctx, s, in)
	if err != nil {
		return CacheBill{}, err
	}
	out, err := client.Result(ctx, run)
	if err != nil || out.Status != agent.StatusCompleted {
		return CacheBill{}, fmt.Errorf("caching job ended %q: %v", out.Status, err)
	}
	srv.mu.Lock()
	b := srv.bill
	srv.mu.Unlock()
	b.Billed = float64(b.Input) + 1.25*float64(b.CacheWrite) + 0.1*float64(b.CacheRead)
	u := out.Usage
	if b.Requests != cachingTurns || u == nil || int64(u.Input) != b.Input || int64(u.CacheRead) != b.CacheRead || int64(u.CacheWrite) != b.CacheWrite {
		return b, fmt.Errorf("caching job: %d requests billed %+v, the product reported %+v", b.Requests, b, u)
	}
	b.CostUsd = u.CostUsd
	h.logf("caching: %s: %d requests, billed input %.0f (input %d, writes %d, reads %d), reported $%s",
		name, b.Requests, b.Billed, b.Input, b.CacheWrite, b.CacheRead, agent.FormatUsd(b.CostUsd))
	return b, nil
}
