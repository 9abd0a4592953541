// Package mcp is the worker's client of the MCP servers of mcp.servers
// and of a workspace's .mcp.json once the user allowed them, on the
// official Go SDK (docs/tools.md "MCP servers' tools"). Contract: every
// fault of a server ends the call with a one-line or bounded error
// result, and a call is made again only after a transport failure, and
// only for a tool that says it is read-only or idempotent.
package mcp

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
)

// Manager holds the worker's connections to its MCP servers.
type Manager struct {
	servers []settings.MCPServer
	// Allowed returns mcp.allowed, read again at each use so that
	// `starter mcp allow` needs no restart (nil: none allowed).
	Allowed func() []string
	// Network returns the runner of a stdio server with its network (off,
	// host, allowlist); New's: its runner, whatever the network.
	Network func(network string) (tools.Runner, error)
	// Dial connects to HTTP servers (nil: directly): the worker's rule
	// of the session's egress (egress.DialContext).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Idle closes a connection unused this long (0: 10 minutes).
	Idle  time.Duration
	mu    sync.Mutex
	conns map[string]*conn // by server's Fingerprint in its workspace
	token atomic.Int64     // the last call's progress token
}

// New is the manager of servers, whose stdio servers runner starts.
func New(servers []settings.MCPServer, runner tools.Runner) *Manager {
	return &Manager{servers: servers, conns: map[string]*conn{},
		Network: func(string) (tools.Runner, error) { return runner, nil }}
}

// conn is one server's connection in one workspace; mu serialises its
// (re)starts.
type conn struct {
	srv    settings.MCPServer
	dial   func(ctx context.Context, network, addr string) (net.Conn, error) // Manager.Dial
	mu     sync.Mutex
	sess   *sdk.ClientSession
	tools  []*sdk.Tool
	stale  atomic.Bool   // the server said its tools changed
	proc   tools.Process // a stdio server's sandbox
	closed chan struct{} // closed when the session ends
	stderr *tailWriter   // of the server started last
	// busy counts the uses under way; the last one arms idle, which ends
	// the connection unless a use began since.
	busy     int
	idle     *time.Timer
	progress sync.Map // a call's progress token: its func(string)
	// failed is the last failed start and when: within failedFor the
	// server is not started again (a model call lists none of its tools,
	// a call of one says why).
	failed   error
	failedAt time.Time
}

// failedFor is how long a server that failed to start is left alone,
// rather than waited for again on every model call.
const failedFor = time.Minute

// Servers are the servers of workspace: the worker's mcp.servers, then
// those of the workspace's .mcp.json that mcp.servers does not name;
// err is a .mcp.json that cannot be read.
func (m *Manager) Servers(workspace string) ([]settings.MCPServer, error) {
	out := slices.Clone(m.servers)
	project, err := settings.ReadProjectMCP(workspace)
	for _, srv := range project {
		if !slices.ContainsFunc(m.servers, func(w settings.MCPServer) bool { return w.Name == srv.Name }) {
			out = append(out, srv)
		}
	}
	return out, err
}

// Refusal says why srv does not start in workspace: a project's server
// the user did not allow (this definition, in this workspace); "" when
// it may start.
func (m *Manager) Refusal(srv settings.MCPServer, workspace string) string {
	if srv.Project == "" || m.Allowed != nil && slices.Contains(m.Allowed(), srv.Fingerprint(workspace)) {
		return ""
	}
	return fmt.Sprintf("MCP server %s of %s is not allowed: run `starter mcp allow %s` in %s", srv.Name, srv.Project, srv.Name, workspace)
}

// Specs returns the specs of the MCP tools tools.enabled (enabled)
// enables, and their names, starting the servers it names in workspace;
// a server that fails or is not allowed is left out, its problem in
// problems.
func (m *Manager) Specs(ctx context.Context, workspace string, env, enabled []string) (specs []agent.ToolSpec, names, problems []string) {
	servers, err := m.Servers(workspace)
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, srv := range servers {
		pre := tools.MCPPrefix + srv.Name + "__"
		if !slices.ContainsFunc(enabled, func(it string) bool { return strings.HasPrefix(it, pre) }) {
			continue
		}
		if why := m.Refusal(srv, workspace); why != "" {
			problems = append(problems, why)
			continue
		}
		c := m.conn(srv, workspace)
		c.use(1, m.Idle)
		_, list, err := c.session(ctx, m.Network, workspace, env)
		c.use(-1, m.Idle)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, t := range list {
			name := pre + t.Name
			if !tools.Enabled(enabled, name) {
				continue
			}
			if len(name) > 64 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
				// The providers refuse a request with such a name.
				problems = append(problems, fmt.Sprintf("MCP tool %q left out: a model's tool name is at most 64 letters, digits, _ and -", name))
				continue
			}
			schema, _ := json.Marshal(t.InputSchema) // decoded from JSON: it marshals
			specs = append(specs, agent.ToolSpec{Name: name, Description: line.Cut(t.Description, 4096), Parameters: schema})
			names = append(names, name)
		}
	}
	return specs, names, problems
}

// Call runs the model's call of the MCP tool name (mcp__<server>__<tool>)
// with args in workspace; onUpdate (nil: none) gets the server's progress
// notifications so far. Every failure is an error result.
func (m *Manager) Call(ctx context.Context, workspace string, env []string, name string, args json.RawMessage, onUpdate func(string)) tools.Result {
	srvName, tool, _ := strings.Cut(strings.TrimPrefix(name, tools.MCPPrefix), "__")
	servers, err := m.Servers(workspace)
	i := slices.IndexFunc(servers, func(s settings.MCPServer) bool { return s.Name == srvName })
	switch {
	case i < 0 && err != nil:
		return errorf("%v", err) // the workspace's .mcp.json, which may have defined it
	case i < 0:
		return errorf("MCP server %q is not one of this worker's mcp.servers nor of the workspace's %s", srvName, settings.ProjectMCPFile)
	case m.Refusal(servers[i], workspace) != "":
		return errorf("%s", m.Refusal(servers[i], workspace))
	}
	c := m.conn(servers[i], workspace)
	c.use(1, m.Idle)
	defer c.use(-1, m.Idle)
	token := fmt.Sprint(m.token.Add(1))
	if onUpdate != nil {
		// The SDK hands notifications over one at a time; one it handles
		// as the call returns may still reach onUpdate, and is harmless.
		var progress []string // the last 20
		c.progress.Store(token, func(p string) {
			progress = append(progress[max(0, len(progress)-19):], p)
			onUpdate(strings.Join(progress, "\n"))
		})
		defer c.progress.Delete(token)
	}
	for attempt := 1; ; attempt++ {
		sess, list, err := c.session(ctx, m.Network, workspace, env)
		if err != nil {
			return errorf("%v", err)
		}
		i := slices.IndexFunc(list, func(t *sdk.Tool) bool { return t.Name == tool })
		if i < 0 {
			return errorf("MCP server %s has no tool %q", srvName, tool)
		}
		t := list[i]
		timeout := time.Duration(c.srv.TimeoutMs) * time.Millisecond
		cctx, cancel := context.WithTimeout(ctx, timeout)
		params := &sdk.CallToolParams{Name: tool, Arguments: args}
		params.SetProgressToken(token)
		res, err := sess.CallTool(cctx, params)
		timedOut := cctx.Err() != nil
		cancel()
		var rpcErr *jsonrpc.Error
		switch {
		case err == nil:
			return result(res)
		case ctx.Err() != nil:
			return errorf("Tool call aborted")
		case errors.As(err, &rpcErr) && (rpcErr.Code < -32005 || rpcErr.Code > -32003): // not the SDK's transport failures
			return errorf("MCP server %s, tool %s: %s", srvName, tool, line.Cut(rpcErr.Message, 500))
		}
		// A transport failure or a hang: the call may have reached the
		// server. The connection is made again on the next call.
		c.mu.Lock()
		c.reset(sess)
		note := c.stderr.note()
		c.mu.Unlock()
		if timedOut {
			return errorf("MCP server %s did not answer the call of %s within %s (timeoutMs): the call may or may not have completed. Check its effects before calling it again.",
				srvName, tool, timeout)
		}
		safe := t.Annotations != nil && (t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint)
		if !safe || attempt == 2 {
			return errorf("MCP server %s lost its connection during the call of %s (%s%s): the call may or may not have completed. Check its effects before calling it again.",
				srvName, tool, line.Cut(err.Error(), 200), note)
		}
	}
}

// Close ends every connection (the worker's stop).
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		c.mu.Lock()
		c.reset(c.sess)
		c.mu.Unlock()
	}
}

func (m *Manager) conn(srv settings.MCPServer, workspace string) *conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := srv.Fingerprint(workspace)
	if m.conns[k] == nil {
		m.conns[k] = &conn{srv: srv, dial: m.Dial}
	}
	return m.conns[k]
}

// session returns the connection's session and its server's tools,
// starting the server (and listing them) when it has none or its last
// one ended.
func (c *conn) session(ctx context.Context, runner func(string) (tools.Runner, error), workspace string, env []string) (*sdk.ClientSession, []*sdk.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil && c.failed != nil && time.Since(c.failedAt) < failedFor {
		return nil, nil, c.failed
	}
	if c.sess != nil {
		select {
		case <-c.closed:
			c.reset(c.sess)
		default:
			if !c.stale.Load() {
				return c.sess, c.tools, nil
			}
		}
	}
	timeout := time.Duration(c.srv.TimeoutMs) * time.Millisecond
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var err error
	if c.sess == nil {
		err = c.start(cctx, runner, workspace, env)
	}
	if err == nil {
		// Listed at start, and again after the server said its list
		// changed (listChanged): the next model call sees the new list.
		c.stale.Store(false)
		c.tools = nil
		for t, lerr := range c.sess.Tools(cctx, nil) {
			if err = lerr; err != nil {
				break
			}
			c.tools = append(c.tools, t)
		}
	}
	if err != nil {
		c.reset(c.sess)
		if cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s (timeoutMs)", timeout)
		}
		err = fmt.Errorf("MCP server %s did not start: %s%s", c.srv.Name, line.Cut(err.Error(), 300), c.stderr.note())
		if ctx.Err() == nil { // not the caller's abort
			c.failed, c.failedAt = err, time.Now()
		}
		return nil, nil, err
	}
	c.failed = nil
	return c.sess, c.tools, nil
}

// start connects to the server: a streamable HTTP endpoint, or a stdio
// server started in workspace by the runner of its network, speaking on
// its stdin and stdout.
func (c *conn) start(ctx context.Context, runner func(string) (tools.Runner, error), workspace string, env []string) error {
	var t sdk.Transport
	c.stderr = &tailWriter{}
	expand := os.ExpandEnv
	if c.srv.Project != "" {
		// A project's values are taken as written: a repository must not
		// pull the worker's variables (its secrets) into a server.
		expand = func(v string) string { return v }
	}
	if c.srv.URL != "" {
		next := http.DefaultTransport
		if c.dial != nil {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.Proxy, tr.DialContext = nil, c.dial // the rule sees the server's host, not a proxy's
			next = tr
		}
		// The SDK resumes a call's stream the server ended (GET with
		// Last-Event-ID, after its retry field): the call is not sent again.
		t = &sdk.StreamableClientTransport{Endpoint: c.srv.URL, HTTPClient: &http.Client{Transport: headers{c.srv.Headers, expand, next}}}
	} else {
		r, err := runner(cmp.Or(c.srv.Network, settings.SandboxNetworkOff))
		if err != nil {
			return err
		}
		inR, inW, err := os.Pipe()
		if err != nil {
			return err
		}
		outR, outW := io.Pipe()
		env = slices.Clone(env)
		for k, v := range c.srv.Env {
			env = append(env, k+"="+expand(v))
		}
		script := "exec " + tools.ShellQuote(append([]string{c.srv.Command}, c.srv.Args...)...)
		if c.srv.Cwd != "" {
			script = "cd " + tools.ShellQuote(c.srv.Cwd) + " && " + script
		}
		p, err := r.Start(tools.Command{Script: script, Dir: workspace, Env: env, Stdin: inR, Output: outW, Stderr: c.stderr})
		inR.Close()
		if err != nil {
			inW.Close()
			return err
		}
		c.proc = p
		go func() {
			exit, _ := p.Wait()
			outW.CloseWithError(fmt.Errorf("the server exited with code %d", exit.Code))
		}()
		t = &sdk.IOTransport{Reader: outR, Writer: inW}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "durable-agent", Version: agent.Version}, &sdk.ClientOptions{
		Capabilities:           &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { c.stale.Store(true) },
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			if f, ok := c.progress.Load(fmt.Sprint(r.Params.ProgressToken)); ok {
				p := r.Params
				f.(func(string))(strings.TrimSpace(fmt.Sprintf("progress %g/%g %s", p.Progress, p.Total, line.Cut(p.Message, 200))))
			}
		},
	})
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	c.sess, c.closed = sess, make(chan struct{})
	go func(closed chan struct{}) { _ = sess.Wait(); close(closed) }(c.closed)
	return nil
}

// use marks a use of the connection begun (n=1) or ended (n=-1); the
// last end arms the idle timer (0: 10 minutes).
func (c *conn) use(n int, idle time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy += n
	if c.idle != nil {
		c.idle.Stop()
	}
	if c.busy == 0 {
		c.idle = time.AfterFunc(cmp.Or(idle, 10*time.Minute), func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.busy == 0 {
				c.reset(c.sess)
			}
		})
	}
}

// reset ends sess if it is the connection's (c.mu held), and its server.
func (c *conn) reset(sess *sdk.ClientSession) {
	if sess != c.sess && sess != nil {
		return
	}
	if c.sess != nil {
		_ = c.sess.Close()
	}
	if c.proc != nil {
		c.proc.Kill()
	}
	c.sess, c.proc = nil, nil
}

// MaxImageBytes bounds the base64 of the images one result carries to
// the model, together: each later model call of the session sends them
// again (they stay in the session file, never in Temporal's history).
const MaxImageBytes = 1 << 20

// result is the model's view of a call's result: its text, its PNG, JPEG,
// GIF and WebP images up to MaxImageBytes (the types every provider
// takes), a line for each other image, audio, resource and link, the
// structured content as JSON when no text came with it, the text cut at
// tools.MaxBytes.
func result(res *sdk.CallToolResult) tools.Result {
	var b strings.Builder
	var images []agent.ContentBlock
	size := 0
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
		case *sdk.ImageContent:
			data := base64.StdEncoding.EncodeToString(c.Data)
			if size+len(data) > MaxImageBytes || !slices.Contains([]string{"image/png", "image/jpeg", "image/gif", "image/webp"}, c.MIMEType) {
				fmt.Fprintf(&b, "[image %s, %d bytes, not shown: only PNG, JPEG, GIF and WebP, %d bytes of base64 a result]", line.Cut(c.MIMEType, 50), len(c.Data), MaxImageBytes)
				continue
			}
			size += len(data)
			fmt.Fprintf(&b, "[image %s, %d bytes, below]", c.MIMEType, len(c.Data))
			images = append(images, agent.ContentBlock{Type: agent.BlockImage, Data: data, MimeType: c.MIMEType})
		case *sdk.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data))
		case *sdk.ResourceLink:
			fmt.Fprintf(&b, "[resource link %s %s]", c.URI, c.Name)
		case *sdk.EmbeddedResource:
			if r := c.Resource; r != nil && r.Text != "" {
				fmt.Fprintf(&b, "[resource %s]\n%s", r.URI, r.Text)
			} else if r != nil {
				fmt.Fprintf(&b, "[resource %s %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob))
			}
		}
	}
	if res.StructuredContent != nil && !slices.ContainsFunc(res.Content, func(c sdk.Content) bool { _, ok := c.(*sdk.TextContent); return ok }) {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	text := b.String()
	if len(text) > tools.MaxBytes { // at a whole character (the SDK's text is valid UTF-8)
		cut := strings.ToValidUTF8(text[:tools.MaxBytes], "")
		text = fmt.Sprintf("%s\n\n[MCP result cut at %d of its %d bytes]", cut, len(cut), len(text))
	}
	return tools.Result{Content: text, IsError: res.IsError, Images: images}
}

func errorf(format string, a ...any) tools.Result {
	return tools.Result{Content: line.Fold(fmt.Sprintf(format, a...)), IsError: true}
}

// headers adds an HTTP server's headers, expanded, to each request.
type headers struct {
	h      map[string]string
	expand func(string) string
	next   http.RoundTripper
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, t.expand(v))
	}
	return t.next.RoundTrip(r)
}

// tailWriter keeps the last 2 KB of a server's stderr, for the error that
// says why it stopped.
type tailWriter struct {
	mu sync.Mutex
	b  []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > 2048 {
		w.b = w.b[len(w.b)-2048:]
	}
	return len(p), nil
}

// note is "; its stderr: <last line>" or "".
func (w *tailWriter) note() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.TrimSpace(string(w.b))
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return ""
	}
	return "; its stderr: " + line.Cut(s, 200)
}
