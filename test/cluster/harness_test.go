//go:build linux

package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/durableagent/durableagent/internal/pgtest"
)

// Settings of the test cluster's prompts: a model call lasts long enough
// to kill its worker, and a dead worker is noticed after a second.
const (
	latencyMs          = 2500
	heartbeatTimeoutMs = 1000
	startTimeout       = 3 * time.Minute
)

// cluster is PostgreSQL, the Temporal server and the binaries.
type cluster struct {
	t         *testing.T
	compose   *Compose
	pg        *pgtest.Server
	dir       string
	bin       string
	frontend  string
	namespace string
	queue     string
	// sessionsURL is the worker's session database (compose URL pointed
	// at the test PostgreSQL).
	sessionsURL string
	server      *proc
	workers     []*proc
	// extraEnv is added to the environment of the next worker started.
	extraEnv map[string]string
	// hide is a directory the next worker started does not see (an
	// empty tmpfs over it in a mount namespace of its own): a host
	// without what is there.
	hide    string
	timings []string
}

// proc is a child process with its output in a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > 500 { // the server's stack traces
			lines[i] = l[:500] + "..."
		}
	}
	return strings.Join(lines, "\n")
}

func (c *cluster) mark(what string, since time.Time) {
	c.timings = append(c.timings, fmt.Sprintf("%s %.1fs", what, time.Since(since).Seconds()))
}

// startCluster brings everything up; it is torn down when the test ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("runs PostgreSQL and a Temporal server (skipped with -short)")
	}
	compose, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, compose: compose, dir: t.TempDir()}
	c.bin = filepath.Join(c.dir, "bin")
	t.Cleanup(func() {
		for _, w := range c.workers {
			c.stop(w, syscall.SIGKILL)
		}
		if c.server != nil {
			// A throwaway cluster: no graceful shutdown to wait for.
			c.stop(c.server, syscall.SIGKILL)
		}
		t.Logf("timings: %s", strings.Join(c.timings, ", "))
	})

	start := time.Now()
	pgEnv := compose.Services["postgresql"].Environment
	c.pg = pgtest.Start(t, pgtest.Options{User: pgEnv["POSTGRES_USER"]})
	c.mark("postgres", start)

	start = time.Now()
	c.build()
	c.mark("build", start)

	start = time.Now()
	c.setupSchema()
	c.mark("schema", start)

	start = time.Now()
	c.startServer()
	c.registerNamespace()
	c.mark("temporal", start)

	c.queue = fmt.Sprintf("cluster-%d", os.Getpid())
	w := compose.Services["worker"]
	u, err := url.Parse(w.Environment["DURABLE_AGENT_SESSION_POSTGRESURL"])
	if err != nil {
		t.Fatal(err)
	}
	u.Host = c.pg.Addr() // the compose host "postgresql" is this machine
	c.sessionsURL = u.String()
	return c
}

// build compiles the Temporal server's main, its SQL tool, the cluster
// worker and the starter from this module (the versions go.mod pins).
func (c *cluster) build() {
	c.t.Helper()
	// Read the worker's main so that a change to it invalidates a cached
	// test result (the binary is built, not imported).
	if _, err := os.ReadFile(filepath.Join(RepoRoot(), "cmd", "worker-cluster", "main.go")); err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", c.bin+string(filepath.Separator),
		"go.temporal.io/server/cmd/server", "go.temporal.io/server/cmd/tools/sql", "./cmd/worker-cluster", "./starter")
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("build: %v\n%s", err, out)
	}
}

// setupSchema runs the compose schema job's temporal-sql-tool lines with
// the tool built from the server module, against the test PostgreSQL.
func (c *cluster) setupSchema() {
	c.t.Helper()
	job := c.compose.Services["temporal-admin-tools"]
	ran := 0
	for _, line := range job.CommandLines() {
		if line == "set -eu" {
			continue
		}
		args := strings.Fields(line)
		if args[0] != "temporal-sql-tool" {
			c.t.Fatalf("schema job line %q: only temporal-sql-tool lines are understood here", line)
		}
		for i := 1; i+1 < len(args); i++ {
			switch args[i] {
			case "--ep", "--endpoint":
				args[i+1] = "127.0.0.1"
			case "-p", "--port":
				args[i+1] = strconv.Itoa(c.pg.Port)
			}
		}
		cmd := exec.Command(filepath.Join(c.bin, "sql"), args[1:]...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "SQL_PASSWORD=" + job.Environment["SQL_PASSWORD"]}
		if out, err := cmd.CombinedOutput(); err != nil {
			c.t.Fatalf("schema job: %s: %v\n%s", line, err, lastLines(string(out), 10))
		}
		ran++
	}
	if ran < 7 {
		c.t.Fatalf("schema job ran %d temporal-sql-tool lines, want the 7 of docker-compose.yml", ran)
	}
}

// hostSpecific are the temporal service variables the test changes: the
// compose hostnames and ports are this machine's.
var hostSpecific = map[string]bool{"POSTGRES_SEEDS": true, "DB_PORT": true, "BIND_ON_IP": true}

// startServer runs `temporal-server start` (the image's entrypoint) with
// the compose temporal service's environment.
func (c *cluster) startServer() {
	c.t.Helper()
	svc := c.compose.Services["temporal"]
	env := map[string]string{}
	for k, v := range svc.Environment {
		if strings.Contains(v, "${") {
			c.t.Fatalf("temporal %s=%s: interpolation is not understood here", k, v)
		}
		env[k] = v
	}
	for k := range hostSpecific {
		if _, ok := env[k]; !ok {
			c.t.Fatalf("compose temporal service lacks %s", k)
		}
	}
	env["POSTGRES_SEEDS"] = "127.0.0.1"
	env["DB_PORT"] = strconv.Itoa(c.pg.Port)
	env["BIND_ON_IP"] = "127.0.0.1"
	env["LOG_LEVEL"] = "warn"
	ports := map[string]int{}
	for _, k := range []string{"FRONTEND_GRPC_PORT", "FRONTEND_HTTP_PORT", "FRONTEND_MEMBERSHIP_PORT",
		"HISTORY_GRPC_PORT", "HISTORY_MEMBERSHIP_PORT", "MATCHING_GRPC_PORT", "MATCHING_MEMBERSHIP_PORT",
		"WORKER_GRPC_PORT", "WORKER_MEMBERSHIP_PORT"} {
		// Membership ports are a smallint in the cluster_membership
		// table: below 32768, under the kernel's ephemeral range.
		ports[k] = freeLowPort(c.t)
		env[k] = strconv.Itoa(ports[k])
	}
	c.frontend = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports["FRONTEND_GRPC_PORT"]))

	// The image works in /etc/temporal with the compose volume mounted at
	// config/dynamicconfig; DYNAMIC_CONFIG_FILE_PATH is relative to it.
	work := filepath.Join(c.dir, "etc-temporal")
	mounted := c.compose.HostPath(svc, "/etc/temporal/config/dynamicconfig")
	if mounted == "" {
		c.t.Fatal("compose temporal service mounts no dynamic config at /etc/temporal/config/dynamicconfig")
	}
	if err := os.MkdirAll(filepath.Join(work, "config"), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Symlink(mounted, filepath.Join(work, "config", "dynamicconfig")); err != nil {
		c.t.Fatal(err)
	}
	c.server = c.spawn("temporal-server", filepath.Join(c.bin, "server"), []string{"start"}, env, work)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		cl, err := client.DialContext(ctx, client.Options{HostPort: c.frontend, Logger: quietLogger{}})
		if err == nil {
			cl.Close()
			return
		}
		if c.server.exited() || ctx.Err() != nil {
			c.t.Fatalf("temporal server not up at %s: %v\n%s", c.frontend, err, c.server.tail(20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// registerNamespace does what the compose namespace job does.
func (c *cluster) registerNamespace() {
	c.t.Helper()
	args := strings.Fields(strings.Join(c.compose.Services["temporal-create-namespace"].CommandLines(), " "))
	retention := 7 * 24 * time.Hour
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "create" && c.namespace == "" {
			for j := i + 1; j+1 < len(args); j++ {
				switch args[j] {
				case "--namespace":
					c.namespace = args[j+1]
				case "--retention":
					d, err := time.ParseDuration(args[j+1])
					if err != nil {
						c.t.Fatalf("namespace job retention %q: %v", args[j+1], err)
					}
					retention = d
				}
			}
		}
	}
	if c.namespace == "" {
		c.t.Fatalf("no namespace create in the compose namespace job: %q", args)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	nc, err := client.NewNamespaceClient(client.Options{HostPort: c.frontend, Logger: quietLogger{}})
	if err != nil {
		c.t.Fatal(err)
	}
	defer nc.Close()
	for {
		err := nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace: c.namespace, WorkflowExecutionRetentionPeriod: durationpb.New(retention)})
		var exists *serviceerror.NamespaceAlreadyExists
		if err == nil || errors.As(err, &exists) {
			break
		}
		if ctx.Err() != nil {
			c.t.Fatalf("register namespace %s: %v", c.namespace, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for {
		_, err := nc.Describe(ctx, c.namespace)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			c.t.Fatalf("namespace %s not served: %v", c.namespace, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// workerEnv is the compose worker's environment on this machine, plus
// the test's prompt settings.
func (c *cluster) workerEnv(home string) map[string]string {
	env := map[string]string{}
	for k, v := range c.compose.Services["worker"].Environment {
		env[k] = resolve(v)
	}
	env["TEMPORAL_ADDRESS"] = c.frontend
	env["DURABLE_AGENT_HOME"] = home
	env["DURABLE_AGENT_SESSION_POSTGRESURL"] = c.sessionsURL
	env["DURABLE_AGENT_MODEL_PROVIDER"] = "scripted" // compose requires a choice; this is the opt-in
	env["DURABLE_AGENT_TEMPORAL_TASKQUEUE"] = c.queue
	env["DURABLE_AGENT_SCRIPTED_LATENCYMS"] = strconv.Itoa(latencyMs)
	// Compose gives each worker container its own network and so its own
	// port 9464; workers sharing this host each take a free port instead.
	env["DURABLE_AGENT_METRICS_LISTEN"] = "127.0.0.1:0"
	for k, v := range c.extraEnv {
		env[k] = v
	}
	if env["TEMPORAL_NAMESPACE"] != c.namespace {
		c.t.Fatalf("compose worker namespace %q, namespace job creates %q", env["TEMPORAL_NAMESPACE"], c.namespace)
	}
	return env
}

// resolve applies compose's ${VAR:-default} with VAR unset.
func resolve(v string) string {
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			return v
		}
		j := strings.Index(v[i:], "}")
		if j < 0 {
			return v
		}
		expr := v[i+2 : i+j]
		def := ""
		if _, d, ok := strings.Cut(expr, ":-"); ok {
			def = d
		}
		v = v[:i] + def + v[i+j+1:]
	}
}

// startWorker starts a cluster worker with a data dir of its own and
// waits until it polls.
func (c *cluster) startWorker(name string) *proc {
	c.t.Helper()
	home := filepath.Join(c.dir, name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		c.t.Fatal(err)
	}
	path, args := filepath.Join(c.bin, "worker-cluster"), []string(nil)
	if c.hide != "" {
		path, args = "unshare", []string{"--mount", "sh", "-c", `mount -t tmpfs none "$1" && exec "$2"`, "sh", c.hide, path}
	}
	p := c.spawn(name, path, args, c.workerEnv(home), home)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.tail(50), "worker running") {
		if p.exited() || time.Now().After(deadline) {
			c.t.Fatalf("%s did not start:\n%s", name, p.tail(20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.workers = append(c.workers, p)
	return p
}

// spawn starts a child that dies with the test binary.
func (c *cluster) spawn(name, path string, args []string, env map[string]string, dir string) *proc {
	c.t.Helper()
	p := &proc{name: name, log: filepath.Join(c.dir, name+".log"), done: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		c.t.Fatal(err)
	}
	p.cmd = exec.Command(path, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p
}

func (c *cluster) stop(p *proc, sig syscall.Signal) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill SIGKILLs the worker with this pid and returns its name.
func (c *cluster) kill(pid int) string {
	c.t.Helper()
	for _, w := range c.workers {
		if w.cmd.Process.Pid == pid && !w.exited() {
			_ = w.cmd.Process.Kill()
			<-w.done
			return w.name
		}
	}
	c.t.Fatalf("pid %d is no running worker of this test", pid)
	return ""
}

// client dials the cluster like the starter.
func (c *cluster) client() client.Client {
	c.t.Helper()
	cl, err := client.Dial(client.Options{HostPort: c.frontend, Namespace: c.namespace, Logger: quietLogger{}})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// freeLowPort finds a free port from 20000 to 32767.
func freeLowPort(t *testing.T) int {
	for range 1000 {
		port := 20000 + rand.IntN(12768)
		if lowPorts[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		lowPorts[port] = true
		return port
	}
	t.Fatal("no free port from 20000 to 32767")
	return 0
}

// lowPorts are the ports handed out already (not yet bound by the server).
var lowPorts = map[int]bool{}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// quietLogger drops the SDK's logs (dial retries while the server starts).
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
