package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// printer renders events for people (or as JSON lines). On a terminal a
// pending retry counts down every second on its own line.
type printer struct {
	mu          sync.Mutex
	w           io.Writer
	json        bool
	session     string
	noCountdown bool
	lastText    string
	stopTick    chan struct{}
	tickDone    chan struct{}
}

func newPrinter(w io.Writer, asJSON bool, sessionID string) *printer {
	return &printer{w: w, json: asJSON, session: sessionID, noCountdown: !isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *printer) print(e agent.Event) {
	p.stopCountdown()
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.StopReason != agent.StopReasonError {
		p.lastText = e.Message.Text()
	}
	if p.json {
		b, _ := json.Marshal(e)
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	switch e.Type {
	case agent.EventAgentStart:
		return
	case agent.EventAgentEnd:
		if e.StopReason == agent.StopReasonError {
			fmt.Fprintf(p.w, "✗ model error: %s\n", e.ErrorMessage)
		}
		return
	case agent.EventMessageEnd:
		return
	case agent.EventAutoRetryStart:
		fmt.Fprintf(p.w, "↻ Retrying (%d/%d) in %s… (cancel: starter abort-retry --session %s)\n", e.Attempt, e.MaxAttempts, agent.FormatDelay(e.DelayMs), p.session)
		if !p.noCountdown && e.DelayMs >= 2000 {
			p.startCountdown(e)
		}
		return
	case agent.EventPromptEnd:
		if e.Status != agent.StatusCompleted {
			fmt.Fprintf(p.w, "%s\n", e)
		}
		return
	}
	fmt.Fprintf(p.w, "%s\n", e)
}

// retryLine is the countdown text.
func retryLine(attempt, max int, delayMs int64) string {
	return fmt.Sprintf("Retrying (%d/%d) in %s…", attempt, max, agent.FormatDelay(delayMs))
}

// startCountdown rewrites a countdown line each second (caller holds mu).
func (p *printer) startCountdown(e agent.Event) {
	stop, done := make(chan struct{}), make(chan struct{})
	p.stopTick, p.tickDone = stop, done
	wake := time.Now().Add(time.Duration(e.DelayMs) * time.Millisecond)
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				p.mu.Lock()
				fmt.Fprint(p.w, "\r\033[K")
				p.mu.Unlock()
				return
			case <-t.C:
				left := time.Until(wake).Milliseconds()
				if left < 0 {
					left = 0
				}
				p.mu.Lock()
				fmt.Fprintf(p.w, "\r\033[K  %s", retryLine(e.Attempt, e.MaxAttempts, left))
				p.mu.Unlock()
			}
		}
	}()
}

func (p *printer) stopCountdown() {
	p.mu.Lock()
	stop, done := p.stopTick, p.tickDone
	p.stopTick, p.tickDone = nil, nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (p *printer) stop() { p.stopCountdown() }
