package control

import (
	"context"

	"github.com/durableagent/durableagent/agent"
)

// promptEnd reads the prompt_end of the followed run, which ended at or
// before f.after, from the last events of the run: the last event is
// prompt_end, so it asks for the one after f.after-1, and pages from the
// start when the run's events end before that.
func (f *follower) promptEnd(ctx context.Context) (agent.Event, bool) {
	for _, after := range []int64{max(f.after-1, 0), 0} {
		for {
			page, err := f.eventsPage(ctx, f.runID, after)
			if err != nil || len(page) == 0 {
				break
			}
			last := page[len(page)-1]
			if last.Type == agent.EventPromptEnd {
				return last, true
			}
			after = last.Seq
		}
	}
	return agent.Event{}, false
}
