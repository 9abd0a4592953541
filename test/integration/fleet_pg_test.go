package integration

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/pgtest"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/testserver"
	"go.temporal.io/sdk/client"
)

// countingProvider counts one worker's model calls to the shared limit.
type countingProvider struct {
	rl    *scripted.RateLimited
	calls *atomic.Int32
}

func (c countingProvider) Complete(ctx context.Context, req llm.Request) agent.Message {
	c.calls.Add(1)
	return c.rl.Complete(ctx, req)
}

// Spec 18.1, where windows live: two workers with data directories (so
// auth.json files) of their own, as on two hosts, and their sessions in
// one PostgreSQL, share the credential's rate-limit window through the
// database: the window is a row there and in neither auth.json, jobs on
// both workers hold for it, the limit costs fewer calls than there are
// jobs, and every job completes once it lifts.
func TestIntegration_FleetCoordinatedBackoffAcrossWorkersInPostgres(t *testing.T) {
	skipShort(t)
	srv := pgtest.Start(t, pgtest.Options{})
	e := newEnv(t)
	e.s.Retry.MaxRetries = 10
	e.s.Session.Store = settings.SessionStorePostgres
	e.s.Session.PostgresURL = srv.CreateDatabase(t, "sessions")
	rl := &scripted.RateLimited{RetryAfter: time.Second}
	var inner sync.Once
	var calls [2]atomic.Int32
	withLimit := func(n *atomic.Int32) app.Extensions {
		return app.Extensions{Activities: func(a *activities.Activities) {
			a.WrapProvider(func(p llm.Provider) llm.Provider {
				// Both workers' scripted models answer alike: the
				// first one built answers outside the limit.
				inner.Do(func() { rl.Inner = p })
				return countingProvider{rl, n}
			})
		}}
	}
	e.ext = withLimit(&calls[0])
	e.startWorker()
	second := e.s
	second.DataDir = t.TempDir()
	w2, err := app.NewWorker(e.c, second, withLimit(&calls[1]))
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w2.Stop)

	db, err := pgstore.Open(context.Background(), e.s.Session.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := auth.WindowKey("scripted", "")
	windowRow := func() bool {
		var n int
		err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM agent_rate_windows WHERE key = $1`, key).Scan(&n)
		return err == nil && n == 1
	}

	const n = 10
	rl.Limit(time.Hour)
	runs := []client.WorkflowRun{e.prompt("pgfleet-0")}
	testserver.WaitFor(t, 30*time.Second, "the first 429", func() bool { l, _ := rl.Counts(); return l >= 1 })
	testserver.WaitFor(t, 10*time.Second, "the window's row in PostgreSQL", windowRow)
	for i, dir := range []string{e.s.DataDir, second.DataDir} {
		f, err := auth.OpenFile(app.AuthPath(settings.Settings{DataDir: dir}), auth.FileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a, err := f.Admit(key, "reader", time.Second); err != nil || a != (auth.Admission{}) {
			t.Fatalf("worker %d's auth.json: Admit = %+v, %v; want no window there", i, a, err)
		}
	}
	rl.Limit(3 * time.Second)
	for i := 1; i < n; i++ {
		runs = append(runs, e.prompt(fmt.Sprintf("pgfleet-%d", i)))
	}
	for i, run := range runs {
		res, err := e.result(run)
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("job %d: %+v, %v; want it to complete once the limit lifts", i, res, err)
		}
	}
	limited, total := rl.Counts()
	t.Logf("%d jobs on 2 workers (%d and %d calls): %d calls during the limit, %d in all",
		n, calls[0].Load(), calls[1].Load(), limited, total)
	if calls[0].Load() == 0 || calls[1].Load() == 0 {
		t.Fatalf("model calls per worker %d and %d: want both workers to have run jobs", calls[0].Load(), calls[1].Load())
	}
	if limited >= n {
		t.Fatalf("%d calls met the limit, want fewer than the %d jobs (one probe per window for both workers)", limited, n)
	}
	if windowRow() {
		t.Fatal("the window's row outlived the limit: the probe's success should have cleared it")
	}
}
