package rpcserver_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/rpcserver/rpcfake"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/rpc"
)

// sessionFake adds the session commands to the fake backend: enough to
// see the server's side of them (detaching, busy checks, answers).
type sessionFake struct {
	*rpcfake.Backend
	mu       sync.Mutex
	switched []string
	level    string // the thinking level set ("": low)
}

func (f *sessionFake) StartPromptWith(ctx context.Context, message string, images []agent.ContentBlock) (client.Prompt, error) {
	return f.StartPrompt(ctx, message)
}
func (f *sessionFake) LoadSession(context.Context, string) (*session.Session, error) { return nil, nil }
func (f *sessionFake) Info(context.Context) (client.SessionInfo, error) {
	f.mu.Lock()
	level := f.level
	f.mu.Unlock()
	if level == "" {
		level = "low"
	}
	return client.SessionInfo{SessionID: f.SessionID(), Model: settings.ModelID{Name: "m1", Provider: "scripted"}, ThinkingLevel: level,
		SteeringMode: agent.QueueModeAll, FollowUpMode: agent.QueueModeOneAtATime, File: "/d/sessions/s1.jsonl", Name: "named"}, nil
}
func (f *sessionFake) Settings() settings.Settings { return settings.Defaults() }
func (f *sessionFake) Models() []settings.ModelID {
	return []settings.ModelID{{Name: "m1", Provider: "scripted"}, {Name: "m2", Provider: "scripted"}}
}
func (f *sessionFake) SetModel(context.Context, string, string) error { return nil }
func (f *sessionFake) SetThinkingLevel(_ context.Context, level string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.level = level
	return nil
}
func (f *sessionFake) SetQueueMode(context.Context, bool, string) error { return nil }
func (f *sessionFake) SetSessionName(context.Context, string) error     { return nil }
func (f *sessionFake) NewSession(context.Context) error                 { return f.note("new") }
func (f *sessionFake) SwitchSession(_ context.Context, ref string) error {
	return f.note("switch:" + ref)
}
func (f *sessionFake) Fork(context.Context, string, bool) (string, error) {
	return "", errors.New("no fork")
}
func (f *sessionFake) Bash(context.Context, string, client.BashOptions) (agent.Message, error) {
	return agent.Message{Role: agent.RoleBashExecution, Output: "ran"}, nil
}
func (f *sessionFake) AbortBash(context.Context) error { return nil }
func (f *sessionFake) note(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.switched = append(f.switched, s)
	return nil
}

// Switching session while a prompt streams detaches it: its events stop
// (it keeps running in Temporal) and the next prompt is not refused as
// busy. bash waits for no prompt: it is refused while one streams.
func TestServe_SwitchSessionDetachesTheRunningPrompt(t *testing.T) {
	f := &sessionFake{Backend: newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))}
	h := serve(t, &rpcserver.Server{Backend: f})
	h.send(`{"id":"p","type":"prompt","message":"one"}`)
	h.response()
	h.eventsUntil(agent.EventAutoRetryStart)
	h.send(`{"id":"b","type":"bash","command":"ls"}`)
	if r := h.response(); r.Success || !strings.HasPrefix(r.Error, "session busy") || !strings.Contains(r.Error, "bash after its prompt_end") {
		t.Errorf("bash during a prompt = %+v", r)
	}
	h.send(`{"id":"s","type":"switch_session","sessionPath":"/d/sessions/other.jsonl"}`)
	if r := h.response(); !r.Success || string(r.Data) != `{"cancelled":false}` {
		t.Fatalf("switch_session = %+v", r)
	}
	run, _ := f.Started(t.Context())
	run.Emit(agent.Event{Type: agent.EventAgentStart}) // the detached prompt goes on
	h.send(`{"id":"b2","type":"bash","command":"ls"}`)
	if r := h.response(); !r.Success || string(r.Data) != `{"output":"ran","exitCode":null,"cancelled":false,"truncated":false}` {
		t.Errorf("bash after the switch = %+v (a detached prompt's event came first?)", r)
	}
	if strings.Join(f.switched, ",") != "switch:/d/sessions/other.jsonl" {
		t.Errorf("backend calls %v", f.switched)
	}
}

// get_state puts the session backend's fields on the workflow's state;
// cycle_model moves to the next available model; a fork error is an
// error response.
func TestServe_StateAndModelsOfASessionBackend(t *testing.T) {
	f := &sessionFake{Backend: newFake(nil)}
	h := serve(t, &rpcserver.Server{Backend: f})
	h.send(`{"id":"1","type":"get_state"}`)
	st := decode[rpc.SessionState](t, h.response())
	if st.Model == nil || st.Model.ID != "m1" || st.ThinkingLevel != "low" || st.SessionFile != "/d/sessions/s1.jsonl" ||
		st.SessionName != "named" || st.SteeringMode != "all" || st.Status != rpc.StatusIdle || st.SessionID != "s1" {
		t.Errorf("state = %+v", st)
	}
	h.send(`{"id":"2","type":"cycle_model"}`)
	if d := decode[rpc.CycleModelData](t, h.response()); d.Model.ID != "m2" || d.ThinkingLevel != "low" || d.IsScoped {
		t.Errorf("cycle_model = %+v", d)
	}
	h.send(`{"id":"3","type":"cycle_thinking_level"}`)
	// pi 1.6: the change is an event too, before the response.
	if l := h.nextRaw(); l != `{"type":"thinking_level_changed","level":"medium"}` {
		t.Errorf("line after cycle_thinking_level = %s", l)
	}
	if d := decode[rpc.ThinkingLevelData](t, h.response()); d.Level != "medium" {
		t.Errorf("cycle_thinking_level = %+v", d)
	}
	// Issue 24: the cycle goes through every level the model takes,
	// xhigh and max included, as get_available_thinking_levels lists them.
	var cycled []string
	for range 6 {
		h.send(`{"id":"3a","type":"cycle_thinking_level"}`)
		h.nextRaw() // thinking_level_changed
		cycled = append(cycled, decode[rpc.ThinkingLevelData](t, h.response()).Level)
	}
	if got := strings.Join(cycled, " "); got != "high xhigh max off minimal low" {
		t.Errorf("cycle_thinking_level from medium went %s, want high xhigh max off minimal low", got)
	}
	h.send(`{"id":"3c","type":"get_available_thinking_levels"}`)
	if d := decode[rpc.ThinkingLevelsData](t, h.response()); strings.Join(d.Levels, " ") != "off minimal low medium high xhigh max" {
		t.Errorf("get_available_thinking_levels = %v", d.Levels)
	}
	h.send(`{"id":"3b","type":"set_session_name","name":"renamed"}`)
	if l := h.nextRaw(); l != `{"type":"session_info_changed","name":"renamed"}` {
		t.Errorf("line after set_session_name = %s", l)
	}
	h.response()
	h.send(`{"id":"4","type":"fork","entryId":"x"}`)
	if r := h.response(); r.Success || r.Error != "no fork" {
		t.Errorf("fork = %+v", r)
	}
	h.send(`{"id":"5","type":"get_available_models"}`)
	if d := decode[rpc.ModelsData](t, h.response()); len(d.Models) != 2 {
		t.Errorf("models = %+v", d)
	}
}
