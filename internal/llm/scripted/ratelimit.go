package scripted

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// RateLimited is a provider behind a rate limit that lasts a while, as a
// fleet of jobs meets it on one credential: during the limit every call
// is answered, at once, with HTTP 429 rate_limit_error and a
// `retry-after` header (whole seconds, as the real providers send it,
// through llm.FailureMessage); outside it the call goes to Inner. It
// counts the calls made during the limit and all calls, so a test can
// tell how many calls the limit cost.
type RateLimited struct {
	// Inner answers outside the limit.
	Inner llm.Provider
	// RetryAfter is the hint sent with each 429 (rounded up to seconds,
	// at least 1).
	RetryAfter time.Duration

	mu             sync.Mutex
	until          time.Time
	limited, total int
}

// Limit starts a limit of d from now (replacing any earlier one).
func (p *RateLimited) Limit(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until = time.Now().Add(d)
}

// Counts returns the calls answered with the 429 and all calls so far.
func (p *RateLimited) Counts() (limited, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limited, p.total
}

// Complete answers the 429 during the limit, else asks Inner.
func (p *RateLimited) Complete(ctx context.Context, req llm.Request) agent.Message {
	if ctx.Err() != nil {
		// A cancelled call sends no request, as a real provider's SDK
		// sends none: it reaches no limit and counts for nothing.
		return llm.AbortedMessage(req)
	}
	now := time.Now()
	p.mu.Lock()
	p.total++
	limited := now.Before(p.until)
	if limited {
		p.limited++
	}
	p.mu.Unlock()
	if !limited {
		return p.Inner.Complete(ctx, req)
	}
	secs := int64((p.RetryAfter + time.Second - 1) / time.Second)
	h := http.Header{}
	h.Set("retry-after", strconv.FormatInt(max(secs, 1), 10))
	return llm.FailureMessage(ctx, req, llm.Failure{
		Text:   "429 Too Many Requests: rate limit exceeded for this credential",
		Status: http.StatusTooManyRequests, Type: "rate_limit_error", Header: h,
	}, now)
}
