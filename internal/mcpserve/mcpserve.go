// Package mcpserve is `starter mcp serve`: durable jobs as the tools of
// an MCP server over stdio or streamable HTTP, each a thin layer on the
// one client (internal/client); docs/mcp.md says what each tool does.
//
// Contract: the job is Temporal's, never the connection's. A client that
// disconnects, or a wait that runs out, stops only the waiting: the
// prompt runs on and is picked up by its session id (status). Bad
// arguments are a one-line tool error naming the problem; a call that
// fails or panics is that call's error, never the server's end. Output
// is bounded: at most MaxList events or sessions, each event one line.
package mcpserve

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/toolview"
)

// Bounds of the tools' waits and output.
const (
	MaxWait   = 300 * time.Second // start's wait_seconds
	MaxList   = 100               // status's events, list_sessions' sessions
	lineRunes = 300               // one event
	textRunes = 16000             // an answer, an error
)

// Server serves the jobs of one Temporal namespace and task queue.
type Server struct {
	K        *client.Controller
	Settings settings.Settings
	// Reload, when set, re-reads the settings before each prompt starts.
	Reload func() (settings.Settings, error)
}

// Job is what start and status report of a session's latest prompt.
type Job struct {
	SessionID string     `json:"sessionId"`
	Status    string     `json:"status" jsonschema:"running, waiting for approval, completed, failed, aborted, or Temporal's name of another end (terminated, timed_out)"`
	Workspace string     `json:"workspace,omitempty"`
	Answer    string     `json:"answer,omitempty" jsonschema:"the last assistant text among the events read"`
	Error     string     `json:"error,omitempty"`
	Approvals []Approval `json:"approvals,omitempty" jsonschema:"the tool calls waiting for approve"`
	Events    []string   `json:"events,omitempty" jsonschema:"the last events, one line each"`
}

// Approval is a tool call waiting for approval.
type Approval struct {
	ToolCallID string `json:"toolCallId"`
	Call       string `json:"call"`
	Why        string `json:"why,omitempty"`
}

// Sessions is the answer of list_sessions: the newest first.
type Sessions struct {
	Sessions []session.Summary `json:"sessions"`
	Running  []string          `json:"running" jsonschema:"the ids of the sessions that run a job"`
	More     int               `json:"more,omitempty" jsonschema:"sessions left out by the limit"`
}

// Done is what steer, approve and abort did.
type Done struct {
	Done string `json:"done"`
}

// The tools' arguments.
type (
	startIn struct {
		Message     string `json:"message" jsonschema:"the prompt"`
		Session     string `json:"session,omitempty" jsonschema:"an existing session to continue, or the id of a new one (default: a new id)"`
		Workspace   string `json:"workspace,omitempty" jsonschema:"absolute directory a new session works in (default: the server's current directory); an existing session keeps its own"`
		WaitSeconds int    `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (at most 300) for the prompt to end or ask for an approval, with its live output as progress notifications; 0 returns at once"`
	}
	statusIn struct {
		Session string `json:"session" jsonschema:"the session id start returned"`
		Events  int    `json:"events,omitempty" jsonschema:"how many of the last events to return (default 20, at most 100)"`
	}
	steerIn struct {
		Session  string `json:"session"`
		Message  string `json:"message"`
		FollowUp bool   `json:"follow_up,omitempty" jsonschema:"deliver when the prompt would otherwise end, instead of after its current tool batch"`
	}
	approveIn struct {
		Session    string `json:"session"`
		ToolCallID string `json:"tool_call_id" jsonschema:"a toolCallId of the job's approvals"`
		Deny       bool   `json:"deny,omitempty"`
		Reason     string `json:"reason,omitempty" jsonschema:"why, shown to the model with a denial"`
	}
	abortIn struct {
		Session string `json:"session"`
	}
	listIn struct {
		Limit int `json:"limit,omitempty" jsonschema:"at most this many sessions (default 20, at most 100)"`
	}
)

// New returns the MCP server of s's tools.
func (s *Server) New() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "durable-agent", Version: agent.Version}, nil)
	no, yes := false, true
	add(srv, &mcp.Tool{Name: "start", Description: "Start a durable coding job: a prompt in a new or existing session, run by the agent's workers in Temporal. Returns the session id at once, or waits up to wait_seconds; the job runs on either way and status picks it up by session id.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &yes}}, s.start)
	add(srv, &mcp.Tool{Name: "status", Description: "The status of a session's latest job and its last events.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, s.status)
	add(srv, &mcp.Tool{Name: "steer", Description: "Send a message to a session's running job: after its current tool batch (or, with follow_up, when it would otherwise end).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}}, func(ctx context.Context, _ *mcp.CallToolRequest, in steerIn) (Done, error) {
		kind := agent.SignalSteer
		if in.FollowUp {
			kind = agent.SignalFollowUp
		}
		if strings.TrimSpace(in.Message) == "" {
			return Done{}, errors.New("message is empty")
		}
		return Done{"sent " + kind + " to session " + in.Session}, s.K.Send(ctx, in.Session, kind, in.Message)
	})
	add(srv, &mcp.Tool{Name: "approve", Description: "Approve or deny (deny, reason) a tool call the running job waits on (status lists them).",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: &yes}}, func(ctx context.Context, _ *mcp.CallToolRequest, in approveIn) (Done, error) {
		p := agent.ApproveToolPayload{ToolCallID: in.ToolCallID, Approved: !in.Deny, Reason: in.Reason}
		return Done{fmt.Sprintf("decided tool call %s in session %s (approved: %t)", in.ToolCallID, in.Session, !in.Deny)}, s.K.ApproveTool(ctx, in.Session, p)
	})
	add(srv, &mcp.Tool{Name: "abort", Description: "Abort a session's running job.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no}}, func(ctx context.Context, _ *mcp.CallToolRequest, in abortIn) (Done, error) {
		return Done{"sent abort to session " + in.Session}, s.K.Abort(ctx, in.Session)
	})
	add(srv, &mcp.Tool{Name: "list_sessions", Description: "The sessions, newest first, and which of them run a job.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, s.list)
	return srv
}

// add registers a tool whose handler's error, or panic, is the call's
// one-line tool error (and its answer dropped).
func add[In, Out any](srv *mcp.Server, t *mcp.Tool, h func(context.Context, *mcp.CallToolRequest, In) (Out, error)) {
	mcp.AddTool(srv, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (_ *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%s: internal error: %v", t.Name, p)
			}
			if err != nil {
				err = errors.New(line.Cut(line.First(err.Error()), textRunes))
			}
		}()
		out, err = h(ctx, req, in)
		return nil, out, err
	})
}

func (s *Server) start(ctx context.Context, req *mcp.CallToolRequest, in startIn) (Job, error) {
	msg, id := strings.TrimSpace(in.Message), in.Session
	switch {
	case msg == "":
		return Job{}, errors.New("message is empty: give the prompt")
	case in.WaitSeconds < 0 || time.Duration(in.WaitSeconds)*time.Second > MaxWait:
		return Job{}, fmt.Errorf("wait_seconds %d: want 0 to %d", in.WaitSeconds, int(MaxWait.Seconds()))
	case in.Workspace != "" && !filepath.IsAbs(in.Workspace):
		return Job{}, fmt.Errorf("workspace %q is not an absolute path", in.Workspace)
	case id == "":
		id = "mcp-" + time.Now().UTC().Format("20060102-150405") + "-" + strings.ToLower(rand.Text()[:6])
	}
	t, err := client.Open(s.K, s.Settings, id)
	if err != nil {
		return Job{}, fmt.Errorf("session: %w", err)
	}
	t.Reload, t.Workspace = s.Reload, in.Workspace
	p, err := t.StartPrompt(ctx, msg)
	if err != nil {
		return Job{}, err
	}
	if in.WaitSeconds == 0 {
		return Job{SessionID: id, Status: agent.StatusRunning}, nil
	}
	s.wait(ctx, req, id, p.RunID, time.Duration(in.WaitSeconds)*time.Second)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a worker may not have taken it yet
	defer cancel()
	return s.job(ctx, id, 5)
}

// wait follows the prompt for up to d: until it ends, asks for an
// approval (the client's to answer), or the client goes away. With a
// progress token each event is a progress notification of one line.
func (s *Server) wait(ctx context.Context, req *mcp.CallToolRequest, id, runID string, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tok, n := req.Params.GetProgressToken(), 0
	_, _ = s.K.Follow(ctx, id, runID, 0, func(e agent.Event) {
		if text := eventLine(e); tok != nil && text != "" {
			n++
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(n), Message: text})
		}
		if e.Type == agent.EventToolApprovalRequest {
			cancel()
		}
	})
}

func (s *Server) status(ctx context.Context, _ *mcp.CallToolRequest, in statusIn) (Job, error) {
	if in.Events < 0 || in.Events > MaxList {
		return Job{}, fmt.Errorf("events %d: want 0 to %d", in.Events, MaxList)
	}
	return s.job(ctx, in.Session, cmp.Or(in.Events, 20))
}

// job is the status of the session's latest prompt with its last n
// events.
func (s *Server) job(ctx context.Context, id string, n int) (Job, error) {
	st, err := s.K.State(ctx, id)
	if err != nil {
		return Job{}, err
	}
	j := Job{SessionID: id, Status: st.Status, Workspace: st.Workspace}
	for _, p := range st.PendingApprovals {
		j.Status = "waiting for approval"
		j.Approvals = append(j.Approvals, Approval{ToolCallID: p.ToolCallID, Call: toolview.CallLine(p.ToolName, p.Args, lineRunes), Why: p.Why})
	}
	evs, err := s.K.Events(ctx, id, "", max(0, st.LastSeq-int64(n)-50))
	for _, e := range evs {
		if m := e.Message; e.Type == agent.EventMessageEnd && m != nil && m.Role == agent.RoleAssistant && m.Text() != "" {
			j.Answer = line.Cut(m.Text(), textRunes)
		}
		if e.Type == agent.EventPromptEnd {
			j.Error = line.Cut(e.ErrorMessage, textRunes)
		}
	}
	for _, e := range evs[max(0, len(evs)-n):] {
		if l := eventLine(e); l != "" {
			j.Events = append(j.Events, fmt.Sprintf("%d %s", e.Seq, l))
		}
	}
	return j, err
}

func (s *Server) list(ctx context.Context, _ *mcp.CallToolRequest, in listIn) (Sessions, error) {
	if in.Limit < 0 || in.Limit > MaxList {
		return Sessions{}, fmt.Errorf("limit %d: want 0 to %d", in.Limit, MaxList)
	}
	sums, err := s.K.SessionSummaries(ctx)
	if err != nil {
		return Sessions{}, err
	}
	jobs, _, err := s.K.Jobs(ctx)
	slices.SortStableFunc(sums, func(a, b session.Summary) int { return b.LastActivity.Compare(a.LastActivity) })
	out := Sessions{Running: []string{}, More: max(0, len(sums)-cmp.Or(in.Limit, 20))}
	out.Sessions = append([]session.Summary{}, sums[:len(sums)-out.More]...)
	for _, j := range jobs {
		out.Running = append(out.Running, j.SessionID)
	}
	return out, err
}

// eventLine is an event as one line of at most lineRunes runes ("" for
// one with nothing to show): its type and what it says.
func eventLine(e agent.Event) string {
	s := e.ErrorMessage
	switch e.Type {
	case agent.EventTurnStart, agent.EventTurnEnd, agent.EventMessageStart, agent.EventMessageUpdate, agent.EventAgentStart, agent.EventAgentEnd:
		return "" // the text comes whole with message_end
	case agent.EventToolExecutionUpdate: // the live output's last line
		if r := e.PartialResult; r != nil && len(r.Content) > 0 {
			s = e.ToolName + " " + r.Content[0].Text[strings.LastIndexByte(strings.TrimRight(r.Content[0].Text, "\n"), '\n')+1:]
		}
	case agent.EventMessageEnd:
		if e.Message != nil {
			s = string(e.Message.Role) + ": " + e.Message.Text()
		}
	case agent.EventToolExecutionStart, agent.EventToolApprovalRequest:
		s = toolview.CallLine(e.ToolName, e.Args, lineRunes) + " (" + e.ToolCallID + ")"
	case agent.EventToolExecutionEnd:
		s = e.ToolName + map[bool]string{false: " ok", true: " error"}[e.IsError]
		if r := e.ToolResult; r != nil && len(r.Content) > 0 {
			s += ": " + r.Content[0].Text
		}
	case agent.EventPromptEnd:
		s = e.Status + " " + e.ErrorMessage
	}
	return line.Cut(strings.Join(strings.Fields(e.Type+" "+s), " "), lineRunes)
}

// Serve serves over stdio (listen "": in and out) until in closes or ctx
// ends, or over streamable HTTP at http://listen/ until ctx ends; listen
// must be a loopback address (the server has no authentication). ready
// gets the address it listens on (HTTP only).
func (s *Server) Serve(ctx context.Context, listen string, in io.Reader, out io.Writer, ready func(addr string)) error {
	srv := s.New()
	if listen == "" {
		return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{out}})
	}
	host, _, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || host != "localhost" && !ip.IsLoopback() {
		return fmt.Errorf("--listen %q: want a loopback host:port such as 127.0.0.1:8765 (the MCP server has no authentication)", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	hs := &http.Server{Handler: http.NewCrossOriginProtection().Handler(h), ReadHeaderTimeout: 30 * time.Second}
	go func() { <-ctx.Done(); _ = hs.Close() }()
	ready(ln.Addr().String())
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
