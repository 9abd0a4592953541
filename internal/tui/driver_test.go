package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

// driver runs a Model the way bubbletea does, without a terminal: every
// command runs on its own goroutine and its message comes back to Update
// on the test goroutine. Countdown ticks do not run by themselves: the
// test fires them after moving the fake clock.
type driver struct {
	t     *testing.T
	m     *Model
	b     *client.Session
	msgs  chan tea.Msg
	clock *fakeClock
	quit  bool
}

// fakeClock is Options.Now and Options.Tick for tests.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []func(time.Time) tea.Msg
	asked   []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Tick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, fn)
	c.asked = append(c.asked, d)
	return nil
}

func newDriver(t *testing.T, b *client.Session) *driver {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Far from the events' times, so the countdown starts from the fake
	// clock's now.
	clock := &fakeClock{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	d := &driver{t: t, b: b, msgs: make(chan tea.Msg, 256), clock: clock,
		m: New(ctx, b, Options{Now: clock.Now, Tick: clock.Tick})}
	d.run(d.m.Init())
	d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	d.until("the session's messages", func() bool { return !d.m.loading })
	return d
}

// send delivers a message to Update and runs the command it returns.
func (d *driver) send(msg tea.Msg) {
	_, cmd := d.m.Update(msg)
	d.run(cmd)
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		switch msg := cmd().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				d.run(c)
			}
		default:
			d.msgs <- msg
		}
	}()
}

// typeLine types text and presses Enter.
func (d *driver) typeLine(text string) {
	d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(text)})
	d.send(tea.KeyMsg{Type: tea.KeyEnter})
}

func (d *driver) key(k tea.KeyType) { d.send(tea.KeyMsg{Type: k}) }

// until feeds command results to Update until cond holds.
func (d *driver) until(what string, cond func() bool) {
	d.t.Helper()
	d.untilWithin(what, 10*time.Second, cond)
}

// untilWithin is until with a deadline of its own.
func (d *driver) untilWithin(what string, within time.Duration, cond func() bool) {
	d.t.Helper()
	deadline := time.After(within)
	for !cond() {
		select {
		case msg := <-d.msgs:
			if _, ok := msg.(tea.QuitMsg); ok {
				d.quit = true
				continue
			}
			d.send(msg)
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s; screen:\n%s", what, d.m.View())
		}
	}
}

// untilScreen waits until the view contains s.
func (d *driver) untilScreen(s string) {
	d.t.Helper()
	d.until("screen showing "+s, func() bool { return strings.Contains(d.m.View(), s) })
}

// advance moves the clock and fires the ticks that are due (the model
// asks for one tick at a time).
func (d *driver) advance(by time.Duration) {
	d.clock.mu.Lock()
	d.clock.now = d.clock.now.Add(by)
	fns := d.clock.pending
	d.clock.pending = nil
	now := d.clock.now
	d.clock.mu.Unlock()
	for _, fn := range fns {
		d.send(fn(now))
	}
}

func (d *driver) status() (string, string) { return d.m.Status() }

// open is the client of session id on c.
func open(t *testing.T, c sdkclient.Client, s settings.Settings, id string) *client.Session {
	t.Helper()
	k, err := client.NewController(c, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.Open(k, s, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
