package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/agent"
)

// ConcResult is one concurrency level N on one fresh worker process.
type ConcResult struct {
	N int `json:"n"`
	// IdleRSSMB is the worker's RSS before any work.
	IdleRSSMB float64 `json:"idleRssMB"`
	// HoldRSSMB is the worker's RSS while InBackoff prompts wait in a
	// retry backoff at once (the largest of a few samples).
	HoldRSSMB float64 `json:"holdRssMB"`
	InBackoff int     `json:"inBackoff"`
	// PeakRSSMB is the largest RSS sampled during the throughput runs.
	PeakRSSMB float64 `json:"peakRssMB"`
	// The anonymous part of the same three (heap and stacks; the rest of
	// the RSS is the mapped binary, which links the whole Temporal server).
	IdleAnonMB float64 `json:"idleAnonMB"`
	HoldAnonMB float64 `json:"holdAnonMB"`
	PeakAnonMB float64 `json:"peakAnonMB"`
	DelayMs    int64   `json:"delayMs"`
	// BareSec and PromptSec are the times from the first start to the last
	// completion of N bare runs (a no-op activity, the same timer, the
	// activity again) and of N prompts (a 503, the backoff, the answer).
	BareSec      float64 `json:"bareSec"`
	PromptSec    float64 `json:"promptSec"`
	BarePerSec   float64 `json:"barePerSec"`
	PromptPerSec float64 `json:"promptPerSec"`
	// Ratio is PromptPerSec / BarePerSec.
	Ratio float64 `json:"ratio"`
	// Rounds is how many bare and prompt batches were timed (their mean).
	Rounds int `json:"rounds"`
}

// startWidth is how many starts (and result waits) the client runs at once.
const startWidth = 16

// holdDelayMs is the backoff of the memory phase: long enough that every
// prompt is still waiting when the last one starts; abort_retry ends them.
const holdDelayMs = 600_000

// concurrency measures, for each N on a fresh worker process: memory with
// N prompts in backoff at once, then the throughput of N bare runs and N
// prompts each started all at once.
func (h *harness) concurrency(ctx context.Context) ([]ConcResult, error) {
	var out []ConcResult
	for _, n := range h.cfg.ConcurrencyN {
		r, err := h.concurrencyAt(ctx, n)
		if err != nil {
			return out, fmt.Errorf("at concurrency %d: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (h *harness) concurrencyAt(ctx context.Context, n int) (ConcResult, error) {
	s := h.scenario(fmt.Sprintf("conc-%d", n))
	s.Retry.BaseDelayMs = h.cfg.ConcurrencyDelayMs
	w, err := startChild(ctx, s)
	if err != nil {
		return ConcResult{}, err
	}
	defer w.stop()
	res := ConcResult{N: n, DelayMs: h.cfg.ConcurrencyDelayMs}
	res.IdleRSSMB, res.IdleAnonMB = w.mem()

	// Memory: N prompts parked in a long backoff at once.
	hold := s
	hold.Retry.BaseDelayMs = holdDelayMs
	runs := make([]client.WorkflowRun, n)
	err = parallel(n, startWidth, func(i int) error {
		run, err := h.startPrompt(ctx, hold, fmt.Sprintf("hold-%d-%d", n, i), overheadMessage, e503)
		runs[i] = run
		return err
	})
	if err != nil {
		return res, err
	}
	k := h.controller(hold)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var mu sync.Mutex
		waiting := 0
		_ = parallel(n, startWidth, func(i int) error {
			st, err := k.State(ctx, fmt.Sprintf("hold-%d-%d", n, i))
			if err == nil && st.PendingRetry != nil {
				mu.Lock()
				waiting++
				mu.Unlock()
			}
			return nil
		})
		if waiting == n {
			res.InBackoff = waiting
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("only %d of %d prompts reached the backoff", waiting, n)
		}
		h.logf("concurrency N=%d: %d of %d prompts in backoff", n, waiting, n)
		time.Sleep(time.Second)
	}
	for i := 0; i < 5; i++ {
		rss, anon := w.mem()
		res.HoldRSSMB, res.HoldAnonMB = max(res.HoldRSSMB, rss), max(res.HoldAnonMB, anon)
		time.Sleep(200 * time.Millisecond)
	}
	h.logf("concurrency N=%d: %d prompts in backoff, worker RSS %.0f MB", n, res.InBackoff, res.HoldRSSMB)
	err = parallel(n, startWidth, func(i int) error {
		var err error
		for attempt := 0; attempt < startAttempts; attempt++ {
			if err = k.AbortRetry(ctx, fmt.Sprintf("hold-%d-%d", n, i)); err == nil {
				break
			}
		}
		if err != nil {
			return err
		}
		return promptDone(ctx, runs[i], agent.StatusFailed)
	})
	if err != nil {
		return res, err
	}

	// Throughput on the same warm worker, in rounds whose order alternates
	// (bare then prompts, then prompts then bare, ...) so that neither
	// side always runs on the fresher server; the times are summed.
	stopSampler := w.sampleMem(&res.PeakRSSMB, &res.PeakAnonMB)
	defer stopSampler()
	rounds := max(h.cfg.ConcurrencyRounds, 1)
	var bareTotal, promptTotal time.Duration
	for r := 0; r < rounds; r++ {
		bare := func() error {
			d, err := batch(n, func(i int) (client.WorkflowRun, error) {
				return h.startBare(ctx, s, fmt.Sprintf("bare-conc-%d-%d-%d", n, r, i),
					BareInput{Payload: overheadMessage, DelayMs: h.cfg.ConcurrencyDelayMs})
			}, func(run client.WorkflowRun) error { return bareDone(ctx, run) })
			bareTotal += d
			return err
		}
		prompt := func() error {
			d, err := batch(n, func(i int) (client.WorkflowRun, error) {
				return h.startPrompt(ctx, s, fmt.Sprintf("conc-%d-%d-%d", n, r, i), overheadMessage, e503)
			}, func(run client.WorkflowRun) error { return promptDone(ctx, run, agent.StatusCompleted) })
			promptTotal += d
			return err
		}
		first, second := bare, prompt
		if r%2 == 1 {
			first, second = prompt, bare
		}
		if err := first(); err != nil {
			return res, err
		}
		if err := second(); err != nil {
			return res, err
		}
	}
	res.Rounds = rounds
	res.BareSec, res.PromptSec = bareTotal.Seconds()/float64(rounds), promptTotal.Seconds()/float64(rounds)
	res.BarePerSec, res.PromptPerSec = float64(n)/res.BareSec, float64(n)/res.PromptSec
	res.Ratio = res.PromptPerSec / res.BarePerSec
	h.logf("concurrency N=%d: bare %.1f s, prompts %.1f s (mean of %d rounds)", n, res.BareSec, res.PromptSec, rounds)
	return res, nil
}

// batch starts n workflows at once (startWidth at a time) and returns the
// time from the first start to the last completion.
func batch(n int, start func(i int) (client.WorkflowRun, error), done func(client.WorkflowRun) error) (time.Duration, error) {
	t0 := time.Now()
	runs := make([]client.WorkflowRun, n)
	if err := parallel(n, startWidth, func(i int) error {
		run, err := start(i)
		runs[i] = run
		return err
	}); err != nil {
		return 0, err
	}
	var mu sync.Mutex
	var last time.Time
	err := parallel(n, 4*startWidth, func(i int) error {
		if err := done(runs[i]); err != nil {
			return err
		}
		now := time.Now()
		mu.Lock()
		if now.After(last) {
			last = now
		}
		mu.Unlock()
		return nil
	})
	return last.Sub(t0), err
}

// sampleMem records the child's largest RSS and anonymous RSS every 100
// ms until the returned stop is called.
func (c *child) sampleMem(peakRSS, peakAnon *float64) (stop func()) {
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			rss, anon := c.mem()
			*peakRSS, *peakAnon = max(*peakRSS, rss), max(*peakAnon, anon)
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(quit); <-finished }
}
