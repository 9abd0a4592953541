package session

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// benchWindow is how many consecutive steps are averaged at each measuring
// point, to smooth out fsync jitter.
const benchWindow = 10

// BenchmarkAppendLoad replays a 500-message conversation the way the
// workflow drives it: append one 2 KB entry, then load the session for the
// next model call (and build its context). One op is the whole conversation.
// It reports the cost of one step (append, load, context) and of the load
// alone around entry 50 and entry 500, and their ratios: with the cache a
// load reads only new bytes and copies the entry slice, so its cost grows far
// slower than the session; a full re-read (BenchmarkLoadCold500) is the cost
// it avoids. Context is linear in the branch by nature and is reported apart.
func BenchmarkAppendLoad(b *testing.B) {
	benchAppendLoad(b, false)
}

// BenchmarkAppendLoad_OtherStore is BenchmarkAppendLoad with the loads done
// by a second Store, as when the appending activity and the model-call
// activity run in different worker processes: each load has to read the
// bytes the other one appended.
func BenchmarkAppendLoad_OtherStore(b *testing.B) {
	benchAppendLoad(b, true)
}

func benchAppendLoad(b *testing.B, otherStore bool) {
	const total, early = 500, 50
	body := strings.Repeat("lorem ipsum ", 2048/12)
	var stepEarly, stepLate, loadEarly, loadLate, ctxEarly, ctxLate time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		writer := openStore(b)
		reader := writer
		if otherStore {
			reader = mustOpen(b, writer.dir)
		}
		b.StartTimer()
		parent := ""
		for n := 1; n <= total; n++ {
			id := fmt.Sprintf("e%03d", n)
			role := agent.RoleUser
			if n%2 == 0 {
				role = agent.RoleAssistant
			}
			t0 := time.Now()
			if _, err := writer.Append("s", msgEntry(id, parent, role, body)); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			s, err := reader.Load("s")
			if err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			if got := len(s.Context(id)); got != n {
				b.Fatalf("context has %d messages, want %d", got, n)
			}
			t3 := time.Now()
			switch {
			case n > early-benchWindow && n <= early:
				stepEarly += t3.Sub(t0)
				loadEarly += t2.Sub(t1)
				ctxEarly += t3.Sub(t2)
			case n > total-benchWindow:
				stepLate += t3.Sub(t0)
				loadLate += t2.Sub(t1)
				ctxLate += t3.Sub(t2)
			}
			parent = id
		}
	}
	samples := float64(b.N * benchWindow)
	b.ReportMetric(float64(stepEarly.Nanoseconds())/samples, "ns/step@50")
	b.ReportMetric(float64(stepLate.Nanoseconds())/samples, "ns/step@500")
	b.ReportMetric(float64(stepLate)/float64(stepEarly), "step-ratio-500/50")
	b.ReportMetric(float64(loadEarly.Nanoseconds())/samples, "ns/load@50")
	b.ReportMetric(float64(loadLate.Nanoseconds())/samples, "ns/load@500")
	b.ReportMetric(float64(loadLate)/float64(loadEarly), "load-ratio-500/50")
	b.ReportMetric(float64(ctxEarly.Nanoseconds())/samples, "ns/context@50")
	b.ReportMetric(float64(ctxLate.Nanoseconds())/samples, "ns/context@500")
}

// BenchmarkLoadCold500 is the cost the cache avoids: a full read and parse
// of a 500-entry (about 1 MB) session by a Store that has not seen it.
func BenchmarkLoadCold500(b *testing.B) {
	st := openStore(b)
	body := strings.Repeat("lorem ipsum ", 2048/12)
	entries := make([]Entry, 500)
	parent := ""
	for i := range entries {
		id := fmt.Sprintf("e%03d", i)
		entries[i] = msgEntry(id, parent, agent.RoleUser, body)
		parent = id
	}
	mustAppend(b, st, "s", entries...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cold := mustOpen(b, st.dir)
		if s := mustLoad(b, cold, "s"); len(s.Entries) != 500 {
			b.Fatalf("loaded %d entries", len(s.Entries))
		}
	}
}
