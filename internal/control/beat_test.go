package control

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// beatSim is a worker heartbeating one activity every period (plus
// jitter) on a server whose clock is offset from the follower's, and a
// follower that Describes when the beat clock says (or every poll without
// a prediction). Describes take rtt, and the server answers at their
// middle.
type beatSim struct {
	period, jitter, rtt, poll time.Duration
	offset                    time.Duration // follower clock - server clock
	// pause, when set, stops the heartbeats from pauseAt for pause.
	pauseAt, pause time.Duration
}

// run simulates d of follower time and returns, per heartbeat after the
// first warm ones, how long after landing a Describe saw it, and the
// number of Describes.
func (s beatSim) run(t *testing.T, r *rand.Rand, d time.Duration, warm int) (delays []time.Duration, describes int) {
	t.Helper()
	c := newBeatClock(200 * time.Millisecond)
	base := time.Unix(1_000_000, 0) // follower clock at the start
	var lands []time.Duration       // landing times, follower clock since base
	at := 37 * time.Millisecond
	for at < d {
		if s.pause > 0 && at >= s.pauseAt && at < s.pauseAt+s.pause {
			at = s.pauseAt + s.pause
		}
		lands = append(lands, at)
		at += s.period + time.Duration(r.Int64N(int64(s.jitter)+1))
	}
	server := func(local time.Duration) time.Time { return base.Add(local - s.offset) }
	seenUpTo := -1
	now, last := time.Duration(0), time.Duration(-1)
	for now < d {
		describes++
		mid := now + s.rtt/2
		i := -1 // the latest heartbeat landed before the server answers
		for j, l := range lands {
			if l <= mid {
				i = j
			}
		}
		beats := map[string]time.Time{}
		if i >= 0 {
			beats["1"] = server(lands[i])
			for j := seenUpTo + 1; j <= i; j++ {
				if j >= warm && j == i { // only the latest one is visible
					delays = append(delays, now+s.rtt-lands[j])
				}
			}
			seenUpTo = max(seenUpTo, i)
		}
		c.observe(base.Add(now), base.Add(now+s.rtt), beats)
		last = now
		next := c.next()
		if next.IsZero() {
			now = last + s.poll
		} else {
			now = max(next.Sub(base), last+s.rtt)
		}
	}
	return delays, describes
}

func p95(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*95/100]
}

// The follower reads a streaming activity's heartbeats just after they
// land: with heartbeats every 205-215 ms, Describes of 4 ms and a server
// clock 3 s off either way, p95 of the wait is a few tens of
// milliseconds (a fixed 100 ms poll waits up to 100 ms) at about one
// Describe per heartbeat (a 100 ms poll makes two).
func TestBeatClock_ReadsJustAfterTheHeartbeatLands(t *testing.T) {
	for _, off := range []time.Duration{3 * time.Second, -3 * time.Second, 0} {
		sim := beatSim{period: 205 * time.Millisecond, jitter: 10 * time.Millisecond, rtt: 4 * time.Millisecond,
			poll: 100 * time.Millisecond, offset: off}
		r := rand.New(rand.NewPCG(1, uint64(off)))
		delays, describes := sim.run(t, r, 60*time.Second, 20)
		beats := len(delays) + 20
		if p := p95(delays); p > 40*time.Millisecond {
			t.Errorf("offset %s: p95 wait %s after a heartbeat lands, want <= 40ms", off, p)
		}
		if perBeat := float64(describes) / float64(beats); perBeat > 1.6 {
			t.Errorf("offset %s: %.2f Describes per heartbeat, want <= 1.6", off, perBeat)
		}
		// Every heartbeat is seen (the latest one of each read).
		if len(delays) < beats-20-beats/10 {
			t.Errorf("offset %s: %d heartbeats seen of %d", off, len(delays), beats-20)
		}
	}
}

// A paused activity (no heartbeat for 3 s) makes the prediction overdue:
// the clock gives up after half a period (the follower polls), and locks
// on again once heartbeats resume.
func TestBeatClock_PauseFallsBackThenLocksAgain(t *testing.T) {
	sim := beatSim{period: 205 * time.Millisecond, jitter: 5 * time.Millisecond, rtt: 4 * time.Millisecond,
		poll: 100 * time.Millisecond, pauseAt: 10 * time.Second, pause: 3 * time.Second}
	r := rand.New(rand.NewPCG(5, 6))
	delays, describes := sim.run(t, r, 30*time.Second, 20)
	if p := p95(delays[len(delays)-40:]); p > 40*time.Millisecond {
		t.Errorf("after the pause: p95 wait %s, want <= 40ms", p)
	}
	// 30 s: about 130 heartbeats, 30 polls during the pause.
	if describes > 260 {
		t.Errorf("%d Describes in 30 s", describes)
	}

	// Unit: overdue by half a period, no prediction.
	c := newBeatClock(200 * time.Millisecond)
	t0 := time.Unix(1000, 0)
	c.observe(t0, t0.Add(2*time.Millisecond), map[string]time.Time{"1": t0})
	if c.next().IsZero() {
		t.Fatal("no prediction after a heartbeat")
	}
	c.observe(t0.Add(400*time.Millisecond), t0.Add(402*time.Millisecond), map[string]time.Time{"1": t0})
	if !c.next().IsZero() {
		t.Fatalf("prediction %s for a heartbeat 200 ms overdue", c.next().Sub(t0))
	}
	c.observe(t0.Add(500*time.Millisecond), t0.Add(502*time.Millisecond), nil)
	if !c.next().IsZero() || len(c.acts) != 0 {
		t.Fatal("an activity that finished is still predicted")
	}
}

// A clock that steps (NTP) contradicts the bounds; they start again and
// the reads lock on again.
func TestBeatClock_ClockStep(t *testing.T) {
	c := newBeatClock(200 * time.Millisecond)
	base := time.Unix(5000, 0)
	server := time.Unix(9000, 0)
	sent := base
	for i := range 30 {
		h := server.Add(time.Duration(i) * 205 * time.Millisecond)
		local := base.Add(time.Duration(i) * 205 * time.Millisecond)
		if i >= 15 {
			local = local.Add(2 * time.Second) // the follower's clock jumped ahead
		}
		// A read 1 ms before the landing misses it, one 3 ms after sees it.
		c.observe(sent, local.Add(-time.Millisecond), map[string]time.Time{"1": h.Add(-205 * time.Millisecond)})
		c.observe(local.Add(3*time.Millisecond), local.Add(5*time.Millisecond), map[string]time.Time{"1": h})
		sent = local.Add(3 * time.Millisecond)
	}
	want := -3998 * time.Second // follower - server after the step
	if !(c.lo < want && want <= c.hi && c.hi-want < 10*time.Millisecond) {
		t.Fatalf("bounds (%s, %s] after the step, want around the new offset %s", c.lo, c.hi, want)
	}
}
