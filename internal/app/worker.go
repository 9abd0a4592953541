package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/mcp"
	"github.com/durableagent/durableagent/internal/metrics"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
	"github.com/durableagent/durableagent/internal/tracing"
	"github.com/durableagent/durableagent/workflows"
)

// Extensions are the extension points of NewWorker. The zero value is
// the product's worker exactly as the settings describe it. The payload
// codec is not one of them: it belongs to the client (Dial puts the codec
// of codec.keyFile on it, and the worker converts payloads with it).
type Extensions struct {
	// Activities adjusts the activities before they are registered: the
	// model providers (Provider, NeedsCredential), the session store
	// (Sessions), the tool policy. Nil: as the settings build them.
	Activities func(*activities.Activities)
	// Interceptors wrap every workflow and activity the worker runs
	// (logging, tracing, per-call metrics), earlier ones outermost.
	Interceptors []interceptor.WorkerInterceptor
	// Runner runs every tool call's commands and file accesses (the
	// model's tools and the user's bash): the door for a sandbox. Nil:
	// tools.Local, the worker's own process.
	Runner tools.Runner
	// Dev lets a worker whose tools.sandbox.mode is auto run bash
	// unsandboxed where bubblewrap does not work (worker --dev, the
	// demo), saying so on stderr, instead of refusing to start.
	Dev bool
}

// NewWorker is the one worker constructor: every main (worker,
// worker-cluster), the demo, internal/stack and every test harness build
// their worker here. It returns a worker on the settings' task queue with
// the workflows and activities of Register and, with tools.placement
// host, the tool worker of this host beside it (newToolWorker),
// started and stopped together. The caller starts and stops it.
func NewWorker(c sdkclient.Client, s settings.Settings, ext ...Extensions) (_ worker.Worker, err error) {
	var o Extensions
	for _, x := range ext {
		o = x
	}
	acts, err := NewActivities(s)
	if err != nil {
		return nil, err
	}
	given := o.Runner
	if o.Runner == nil {
		r, note, err := ToolRunner(s, o.Dev)
		if err != nil {
			return nil, err
		}
		if note != "" {
			fmt.Fprintf(os.Stderr, "worker: %s\n", note)
		}
		o.Runner = r
	}
	acts.ToolPolicy.Runner = o.Runner
	acts.MCP = MCPManager(s, given, o.Dev)
	acts.ModelQueues = s.Model.ModelQueues()
	if o.Activities != nil {
		o.Activities(acts)
	}
	g := &group{mcp: acts.MCP}
	defer func() {
		if err != nil {
			g.stopMetrics()
		}
	}()
	if acts.Push == nil {
		if g.push, err = servePush(s, o.Dev); err != nil {
			return nil, err
		}
		acts.Push = g.push
	}
	if g.metrics, err = serveMetrics(s, o.Dev); err != nil {
		return nil, err
	}
	if g.metrics != nil {
		// The SDK's metrics of this worker's polls, tasks and calls.
		if c, err = withMetrics(c, s, g.metrics.Handler); err != nil {
			return nil, err
		}
		g.close = c.Close
	}
	tp, err := tracing.FromEnv(context.Background(), "durable-agent-worker")
	if err != nil {
		return nil, err
	}
	wo := WorkerOptions(s)
	wo.Interceptors = o.Interceptors
	if tp != nil {
		ti, err := tp.Interceptor()
		if err != nil {
			return nil, err
		}
		wo.Interceptors = append([]interceptor.WorkerInterceptor{ti}, o.Interceptors...)
		g.traces = tp
	}
	tracing.SetCapture(s.Otel.CaptureContent)
	if err := ensureJobSearch(c, s.Temporal.Namespace); err != nil {
		return nil, err
	}
	g.Worker = worker.New(c, s.Temporal.TaskQueue, wo)
	Register(g.Worker, acts)
	if acts.ToolHost != "" {
		g.extra = append(g.extra, newToolWorker(c, s, acts, wo))
	}
	g.extra = append(g.extra, newModelWorkers(c, s, acts, wo)...)
	return g, nil
}

// Register puts the workflows and their activities on w: the one list of
// what a worker runs.
func Register(w worker.Registry, acts *activities.Activities) {
	w.RegisterWorkflowWithOptions(workflows.Prompt, workflow.RegisterOptions{Name: workflows.PromptWorkflowName})
	w.RegisterActivityWithOptions(acts.SubAgentTask, activity.RegisterOptions{Name: activities.SubAgentTaskName})
	w.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: activities.CallModelName})
	w.RegisterActivityWithOptions(acts.AppendEntries, activity.RegisterOptions{Name: activities.AppendEntriesName})
	w.RegisterActivityWithOptions(acts.LoadSession, activity.RegisterOptions{Name: activities.LoadSessionName})
	w.RegisterActivityWithOptions(acts.MarkUsageLimitReached, activity.RegisterOptions{Name: activities.MarkUsageLimitReachedName})
	w.RegisterWorkflowWithOptions(workflows.Compact, workflow.RegisterOptions{Name: workflows.CompactWorkflowName})
	w.RegisterActivityWithOptions(acts.Summarize, activity.RegisterOptions{Name: activities.SummarizeName})
	w.RegisterActivityWithOptions(acts.BeginPrompt, activity.RegisterOptions{Name: activities.BeginPromptName})
	w.RegisterActivityWithOptions(acts.RecordGrant, activity.RegisterOptions{Name: activities.RecordGrantName})
	w.RegisterActivityWithOptions(acts.RecordEntry, activity.RegisterOptions{Name: activities.RecordEntryName})
	w.RegisterActivityWithOptions(acts.SessionSettings, activity.RegisterOptions{Name: activities.SessionSettingsName})
	w.RegisterWorkflowWithOptions(workflows.Bash, workflow.RegisterOptions{Name: workflows.BashWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.DeleteSession, workflow.RegisterOptions{Name: workflows.DeleteSessionWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.SessionWrite, workflow.RegisterOptions{Name: workflows.SessionWriteWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.ScheduledPrompt, workflow.RegisterOptions{Name: workflows.ScheduledPromptWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.SessionRead, workflow.RegisterOptions{Name: workflows.SessionReadWorkflowName})
	w.RegisterActivityWithOptions(acts.ReadSession, activity.RegisterOptions{Name: activities.ReadSessionName})
	w.RegisterWorkflowWithOptions(workflows.ProbeHosts, workflow.RegisterOptions{Name: workflows.ProbeHostsWorkflowName})
	registerToolActivities(w, acts)
}

// registerToolActivities are the activities that touch a session's
// workspace: on the main worker, and alone on a host's tool worker.
func registerToolActivities(w worker.Registry, acts *activities.Activities) {
	w.RegisterActivityWithOptions(acts.RunTool, activity.RegisterOptions{Name: activities.RunToolName})
	w.RegisterActivityWithOptions(acts.UserBash, activity.RegisterOptions{Name: activities.UserBashName})
	w.RegisterActivityWithOptions(acts.DeleteSession, activity.RegisterOptions{Name: activities.DeleteSessionName})
	w.RegisterActivityWithOptions(acts.WorktreeSummary, activity.RegisterOptions{Name: activities.WorktreeSummaryName})
	w.RegisterActivityWithOptions(acts.CheckWorkspace, activity.RegisterOptions{Name: activities.CheckWorkspaceName})
	w.RegisterActivityWithOptions(acts.Checkpoint, activity.RegisterOptions{Name: activities.CheckpointName})
}

// newToolWorker is the worker that runs the tool calls of the sessions
// this host holds (tools.placement host): the tool activities on
// activities.ToolQueue(taskQueue, host).
func newToolWorker(c sdkclient.Client, s settings.Settings, acts *activities.Activities, wo worker.Options) worker.Worker {
	w := worker.New(c, activities.ToolQueue(s.Temporal.TaskQueue, acts.ToolHost), wo)
	registerToolActivities(w, acts)
	return w
}

// newModelWorkers are the workers of the providers' model queues
// (activities.ModelQueue) when model.maxConcurrentCalls or
// model.callsPerSecond is set: each runs the model calls (CallModel,
// Summarize) of one provider this worker serves, at most
// maxConcurrentCalls at once on this worker, and asks the server to
// dispatch at most callsPerSecond per second from the queue, across all
// its pollers. None when neither is set: model calls then run on the
// main queue, as ever.
func newModelWorkers(c sdkclient.Client, s settings.Settings, acts *activities.Activities, wo worker.Options) []worker.Worker {
	if !acts.ModelQueues {
		return nil
	}
	wo.DisableWorkflowWorker = true
	if s.Model.MaxConcurrentCalls > 0 {
		wo.MaxConcurrentActivityExecutionSize = s.Model.MaxConcurrentCalls
	}
	wo.TaskQueueActivitiesPerSecond = s.Model.CallRate()
	var out []worker.Worker
	for _, p := range ServedProviders(s) {
		w := worker.New(c, activities.ModelQueue(s.Temporal.TaskQueue, p), wo)
		w.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: activities.CallModelName})
		w.RegisterActivityWithOptions(acts.Summarize, activity.RegisterOptions{Name: activities.SummarizeName})
		out = append(out, w)
	}
	return out
}

// StreamInterval is stream.intervalMs as a duration.
func StreamInterval(s settings.Settings) time.Duration {
	if s.Stream.IntervalMs <= 0 {
		return activities.MaxHeartbeatInterval
	}
	return time.Duration(s.Stream.IntervalMs) * time.Millisecond
}

// WorkerOptions are the SDK worker options of the settings. Heartbeats
// leave the worker at the stream interval: they carry the live output of
// running calls to clients and cancellations (abort) back to the calls.
func WorkerOptions(s settings.Settings) worker.Options {
	o := worker.Options{
		DefaultHeartbeatThrottleInterval: StreamInterval(s),
		MaxHeartbeatThrottleInterval:     StreamInterval(s),
	}
	if h := ToolHost(s); h != "" {
		// The pollers of the task queue name the tool hosts, where a
		// starter looks for one that has a new session's workspace.
		m, _ := os.Hostname()
		o.Identity = fmt.Sprintf("%d@%s@%s%s", os.Getpid(), m, activities.HostMark, h)
	}
	return o
}

// withMetrics is c reporting its metrics to h: a client on c's connection
// with the namespace and codec Dial gives it.
func withMetrics(c sdkclient.Client, s settings.Settings, h sdkclient.MetricsHandler) (sdkclient.Client, error) {
	ns := s.Temporal.Namespace
	if opts, err := client.ClientOptions(s, nil); err == nil && opts.Namespace != "" {
		ns = opts.Namespace
	}
	opts := sdkclient.Options{Namespace: ns, MetricsHandler: h, Logger: sdklog.NewStructuredLogger(client.WarnLogger())}
	cdc, err := codec.FromSettings(s)
	if err != nil {
		return nil, err
	}
	opts.DataConverter = cdc.DataConverter()
	mc, err := sdkclient.NewClientFromExisting(c, opts)
	if err != nil {
		return nil, fmt.Errorf("worker metrics client: %w", err)
	}
	return mc, nil
}

// serveMetrics serves the worker's metrics on metrics.listen (nil: not
// set, or off). With dev, an address that is taken is only a warning:
// another dev worker on this machine serves its own there.
func serveMetrics(s settings.Settings, dev bool) (*metrics.Server, error) {
	addr := s.Metrics.Listen
	if addr == "" || addr == metrics.Off {
		return nil, nil
	}
	srv, err := metrics.Serve(addr)
	if err != nil {
		if dev {
			fmt.Fprintf(os.Stderr, "worker: no metrics: %v (set metrics.listen to another address)\n", err)
			return nil, nil
		}
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "worker: metrics: %s\n", srv.URL())
	return srv, nil
}

// servePush is ServePush with worker --dev's default: unless
// stream.push is set, a dev worker pushes on loopback (127.0.0.1:0), the
// transport that met the fan-out targets (docs/live.md), and goes on
// with heartbeats alone, saying so, when it cannot listen.
func servePush(s settings.Settings, dev bool) (*live.Hub, error) {
	if !dev || s.Stream.Push != "" {
		return ServePush(s)
	}
	s.Stream.Push = "127.0.0.1:0"
	h, err := ServePush(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: no live push: %v (followers read the heartbeats)\n", err)
		return nil, nil
	}
	return h, nil
}

// ServePush starts the live-output push hub on stream.push (nil: off,
// the default outside worker --dev). With a payload codec the hub seals
// its lines with it, and it serves HTTPS by stream.pushTLS (pushsec.go).
func ServePush(s settings.Settings) (*live.Hub, error) {
	addr := s.Stream.Push
	if addr == "" || addr == "off" {
		return nil, nil
	}
	o, says, err := pushHubOptions(s, addr)
	if err != nil {
		return nil, err
	}
	h, err := live.ListenHub(addr, o)
	if err != nil {
		return nil, fmt.Errorf("stream.push: %w", err)
	}
	fmt.Fprintf(os.Stderr, "worker: live output pushed from %s (%s)\n", h.URL(), says)
	return h, nil
}

// group is the main worker of one NewWorker and the workers beside it
// (its host's tool worker, the providers' model workers), started and
// stopped together, and what closes after them: the metrics client and
// the metrics server NewWorker started (nil: none).
type group struct {
	worker.Worker
	extra   []worker.Worker
	close   func()
	metrics *metrics.Server
	traces  *tracing.Provider
	push    *live.Hub
	mcp     *mcp.Manager
}

// stopMetrics stops the listeners NewWorker started (metrics, push).
func (g *group) stopMetrics() {
	if g.metrics != nil {
		g.metrics.Close()
	}
	if g.push != nil {
		g.push.Close()
	}
}

func (g *group) Start() error {
	for i, w := range g.extra {
		if err := w.Start(); err != nil {
			g.stopExtra(i)
			return err
		}
	}
	if err := g.Worker.Start(); err != nil {
		g.stopExtra(len(g.extra))
		return err
	}
	return nil
}

// stopExtra stops the first n extra workers.
func (g *group) stopExtra(n int) {
	for _, w := range g.extra[:n] {
		w.Stop()
	}
}

func (g *group) Run(interruptCh <-chan interface{}) error {
	if err := g.Start(); err != nil {
		return err
	}
	<-interruptCh
	g.Stop()
	return nil
}

func (g *group) Stop() {
	g.Worker.Stop()
	g.stopExtra(len(g.extra))
	if g.close != nil {
		g.close()
	}
	g.stopMetrics()
	if g.mcp != nil {
		g.mcp.Close()
	}
	if g.traces != nil {
		g.traces.Shutdown()
	}
}

// Running is a started worker: its client, the worker, and the codec
// server when one runs. Both worker mains start it with StartWorker
// (stack.Start, with or without the embedded server, and
// cmd/worker-cluster, which must not link the server).
type Running struct {
	Client sdkclient.Client
	Worker worker.Worker
	Codec  *codec.Server // nil when no codec server runs
}

// StartWorker builds and starts the worker on c, then the codec server
// codecAddr asks for (ServeCodec, on by default with ext.Dev). On an
// error it closes what it started, c included.
func StartWorker(c sdkclient.Client, s settings.Settings, ext Extensions, codecAddr string, codecOrigins []string, logger *slog.Logger) (*Running, error) {
	r := &Running{Client: c}
	w, err := NewWorker(c, s, ext)
	if err == nil {
		if err = w.Start(); err != nil {
			err = fmt.Errorf("start worker on task queue %s: %w", s.Temporal.TaskQueue, err)
		} else {
			r.Worker = w
			r.Codec, err = ServeCodec(s, codecAddr, ext.Dev, codecOrigins, logger)
		}
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Close stops the codec server, the worker and the client, in that order,
// so no task is lost mid-flight.
func (r *Running) Close() {
	if r.Codec != nil {
		_ = r.Codec.Close()
		r.Codec = nil
	}
	if r.Worker != nil {
		r.Worker.Stop()
		r.Worker = nil
	}
	if r.Client != nil {
		r.Client.Close()
		r.Client = nil
	}
}

// CodecServerOff is the ServeCodec address that disables the codec server.
const CodecServerOff = "off"

// ServeCodec serves the payload codec of the settings on loopback addr
// for a Temporal Web UI, to the browser origins given; nil when it does
// not serve. "" serves it at codec.DefaultServerAddress when byDefault is
// set and a codec key is configured, and only warns (to logger) if that
// port is taken; CodecServerOff never serves it. An explicit address
// without a codec key is an error.
func ServeCodec(s settings.Settings, addr string, byDefault bool, origins []string, logger *slog.Logger) (*codec.Server, error) {
	explicit := addr != "" && addr != CodecServerOff
	if addr == CodecServerOff || (!explicit && !byDefault) {
		return nil, nil
	}
	c, err := codec.FromSettings(s)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if explicit {
			return nil, fmt.Errorf("codec server at %s: no codec key is configured (set codec.keyFile or %s)", addr, settings.EnvCodecKey)
		}
		return nil, nil
	}
	if !explicit {
		addr = codec.DefaultServerAddress
	}
	srv, err := codec.Serve(addr, codec.Handler(c, origins))
	if err != nil && !explicit {
		// Only a convenience here: the worker runs without it.
		cmp.Or(logger, slog.Default()).Warn("codec server not started; pass --codec-server ADDR to choose another port", "error", err.Error())
		return nil, nil
	}
	return srv, err
}

// MCPManager is the MCP client of s (package mcp): its mcp.servers, each
// stdio one in a sandbox of s with the server's own network (all in
// runner when it is set, a test's), its HTTP servers at the hosts of
// tools.sandbox.allowHosts only (but with network host or mode off),
// mcp.allowed read from the settings file again at each use so that
// `starter mcp allow` needs no restart.
func MCPManager(s settings.Settings, runner tools.Runner, dev bool) *mcp.Manager {
	servers, _ := settings.ParseMCPServers(s.MCP.Servers) // Load checked them
	m := mcp.New(servers, runner)
	if runner == nil {
		m.Network = func(network string) (tools.Runner, error) {
			n := s
			n.Tools.Sandbox.Network = network
			r, _, err := ToolRunner(n, dev)
			return r, err
		}
	}
	if sb := s.Tools.Sandbox; sb.Mode != settings.SandboxOff && sb.Network != settings.SandboxNetworkHost {
		allow, _ := egress.ParseAllowList(sb.AllowHosts) // Load checked them
		m.Dial = egress.DialContext(allow)
	}
	m.Idle = time.Duration(s.MCP.IdleMs) * time.Millisecond
	m.Allowed = func() []string {
		now, _ := settings.Load(settings.LoadOptions{File: s.File()}) // the start's alone when it fails
		return append(now.MCP.Allowed, s.MCP.Allowed...)
	}
	return m
}
