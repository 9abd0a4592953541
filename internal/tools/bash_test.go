package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestBash(t *testing.T) {
	ws := workspace(t, map[string]string{"hello.txt": "from a file\n"})
	tests := []struct {
		name    string
		args    obj
		isErr   bool
		exact   string
		want    []string
		code    int
		hasCode bool
	}{
		{name: "stdout", args: obj{"command": "echo hello"}, exact: "hello", code: 0, hasCode: true},
		{name: "no output", args: obj{"command": "true"}, exact: "(no output)", code: 0, hasCode: true},
		{name: "stderr merged in order", args: obj{"command": "echo out; echo err >&2; echo out2"}, exact: "out\nerr\nout2"},
		{name: "runs in the workspace", args: obj{"command": "cat hello.txt; pwd"}, want: []string{"from a file\n" + ws}},
		{name: "stdin is /dev/null", args: obj{"command": "cat; echo done"}, exact: "done"},
		{name: "bash syntax", args: obj{"command": "a=(x y z); echo ${#a[@]} ${a[1]}"}, exact: "3 y"},
		{name: "exit code", args: obj{"command": "echo partial; exit 3"}, isErr: true,
			exact: "partial\n\nCommand exited with code 3", code: 3, hasCode: true},
		{name: "exit code without output", args: obj{"command": "false"}, isErr: true, exact: "Command exited with code 1", code: 1, hasCode: true},
		{name: "ansi stripped", args: obj{"command": `printf '\033[31mred\033[0m\n'`}, exact: "red"},
		{name: "osc, crlf and control characters dropped", args: obj{"command": `printf 'a\r\nb\033]0;title\007c\001\177d\te\n'`}, exact: "a\nbcd\te"},
		{name: "negative timeout", args: obj{"command": "true", "timeout": -1}, isErr: true,
			exact: "bash: timeout -1 s is negative; call bash again with a timeout from 0 (none) to 86400 seconds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, Options{Workspace: ws, OutputDir: "out"}, "bash", tc.args)
			if r.IsError != tc.isErr {
				t.Fatalf("IsError = %v: %s", r.IsError, r.Content)
			}
			if tc.exact != "" && r.Content != tc.exact {
				t.Fatalf("got %q, want %q", r.Content, tc.exact)
			}
			mustContain(t, r.Content, tc.want...)
			if tc.hasCode && r.Details["exitCode"] != tc.code {
				t.Fatalf("exitCode = %v, want %d", r.Details["exitCode"], tc.code)
			}
		})
	}
}

func TestBashTailTruncation(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name, command string
		notice        string
		first, last   string // first and last lines shown
		full          int    // lines in the full output file
	}{
		{name: "by lines", command: "seq 1 5000", notice: "[Showing last 2000 lines of 5000. Full output: ",
			first: "3001", last: "5000", full: 5000},
		{name: "by bytes", command: `awk 'BEGIN { for (i = 1; i <= 2000; i++) printf "%0100d\n", i }'`,
			notice: "[Showing last 506 lines of 2000 (50.0KB limit). Full output: ",
			first:  fmt.Sprintf("%0100d", 1495), last: fmt.Sprintf("%0100d", 2000), full: 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rel, tmp := outputDir(t, ws)
			r := call(t, Options{Workspace: ws, OutputDir: rel}, "bash", obj{"command": tc.command})
			mustOK(t, r)
			mustContain(t, r.Content, tc.notice)
			body, _, _ := strings.Cut(r.Content, "\n\n[")
			lines := strings.Split(body, "\n")
			if lines[0] != tc.first || lines[len(lines)-1] != tc.last {
				t.Fatalf("shown lines %q .. %q, want %q .. %q", lines[0], lines[len(lines)-1], tc.first, tc.last)
			}
			if len(body) > MaxBytes || len(lines) > MaxLines {
				t.Fatalf("shown %d bytes, %d lines: over the limits", len(body), len(lines))
			}
			path, _ := r.Details["fullOutputPath"].(string)
			if path == "" || filepath.Dir(path) != tmp || r.Details["truncated"] != true {
				t.Fatalf("details %v: want the full output under %s", r.Details, tmp)
			}
			mustContain(t, r.Content, "Full output: "+path+"]")
			full := readFile(t, path)
			if n := strings.Count(full, "\n"); n != tc.full {
				t.Fatalf("full output has %d lines, want %d", n, tc.full)
			}
			if !strings.HasPrefix(full, "1\n") && !strings.HasPrefix(full, fmt.Sprintf("%0100d\n", 1)) {
				t.Fatalf("full output does not start at the beginning: %.40q", full)
			}
		})
	}

	t.Run("small output leaves no file", func(t *testing.T) {
		rel, tmp := outputDir(t, ws)
		r := call(t, Options{Workspace: ws, OutputDir: rel}, "bash", obj{"command": "seq 1 2000"})
		mustOK(t, r)
		mustNotContain(t, r.Content, "Showing")
		if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
			t.Fatalf("temp dir holds %d files", len(entries))
		}
	})

	t.Run("one huge line", func(t *testing.T) {
		r := call(t, Options{Workspace: ws, OutputDir: "out"}, "bash", obj{"command": `head -c 200000 /dev/zero | tr '\0' x`})
		mustOK(t, r)
		mustContain(t, r.Content, "[Showing last 50.0KB of line 1 (line is 100.0KB). Full output: ")
	})
}

func TestBashTimeout(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		name string
		args obj
		opts Options
		want string
	}{
		{"timeout argument", obj{"command": "echo before; sleep 30", "timeout": 1}, Options{}, "before\n\nCommand timed out after 1 seconds"},
		{"default timeout", obj{"command": "sleep 30"}, Options{DefaultTimeout: 500 * time.Millisecond}, "Command timed out after 0.5 seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Workspace = ws
			start := time.Now()
			r := call(t, o, "bash", tc.args)
			mustErr(t, r)
			if r.Content != tc.want {
				t.Fatalf("got %q, want %q", r.Content, tc.want)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Fatalf("took %v", el)
			}
			if r.Details["timedOut"] != true {
				t.Fatalf("details %v", r.Details)
			}
		})
	}
	t.Run("zero disables the default", func(t *testing.T) {
		r := call(t, Options{Workspace: ws, DefaultTimeout: time.Millisecond}, "bash", obj{"command": "sleep 0.2; echo ok", "timeout": 0})
		mustOK(t, r)
		if r.Content != "ok" {
			t.Fatalf("got %q", r.Content)
		}
	})
}

// Issue 20 item 1: a timeout argument the activity's Temporal timeout
// cannot hold (9.2e9 s wedged the session), or that is not a finite
// non-negative number, is an error result naming the value and the
// maximum, and the command does not run. The maximum itself is accepted.
// Spec 13.4.8.
func TestBashTimeoutArgumentOutOfRange(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		name    string
		timeout any
		want    string
	}{
		{"far above the maximum", 9.2e9, "bash: timeout 9200000000 s is above the maximum of 86400 s (24 hours); call bash again with a timeout from 0 (none) to 86400 seconds"},
		{"just above the maximum", 86400.5, "bash: timeout 86400.5 s is above the maximum of 86400 s (24 hours); call bash again with a timeout from 0 (none) to 86400 seconds"},
		{"a quoted huge number", "1e300", "bash: timeout 1e+300 s is above the maximum of 86400 s (24 hours); call bash again with a timeout from 0 (none) to 86400 seconds"},
		{"NaN as a string", "NaN", "bash: timeout NaN is not a finite number of seconds; call bash again with a timeout from 0 (none) to 86400 seconds"},
		{"infinity as a string", "-Inf", "bash: timeout -Inf is not a finite number of seconds; call bash again with a timeout from 0 (none) to 86400 seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, Options{Workspace: ws, OutputDir: "out"}, "bash", obj{"command": "touch ran", "timeout": tc.timeout})
			mustErr(t, r)
			if r.Content != tc.want {
				t.Fatalf("got %q, want %q", r.Content, tc.want)
			}
			if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
				t.Fatal("the command ran although its timeout was refused")
			}
		})
	}
	t.Run("the maximum is accepted", func(t *testing.T) {
		r := call(t, Options{Workspace: ws}, "bash", obj{"command": "echo ok", "timeout": 86400})
		mustOK(t, r)
	})
}

func TestBashTimeoutArg(t *testing.T) {
	for _, tc := range []struct {
		args string
		want time.Duration
		ok   bool
	}{
		{`{"command":"x"}`, 0, false},
		{`{"command":"x","timeout":null}`, 0, false},
		{`{"command":"x","timeout":90}`, 90 * time.Second, true},
		{`{"command":"x","timeout":"1.5"}`, 1500 * time.Millisecond, true},
		{`{"command":"x","timeout":0}`, 0, true},
		{`{"command":"x","timeout":86400}`, MaxBashTimeout, true},
		{`{"command":"x","timeout":9.2e9}`, 0, false},
		{`{"command":"x","timeout":-3}`, 0, false},
		{`{"command":"x","timeout":"Inf"}`, 0, false},
		{`{"command":"x","timeout":1e400}`, 0, false},
		{`not json`, 0, false},
	} {
		d, ok := BashTimeoutArg(json.RawMessage(tc.args))
		if d != tc.want || ok != tc.ok {
			t.Errorf("BashTimeoutArg(%s) = %v, %v; want %v, %v", tc.args, d, ok, tc.want, tc.ok)
		}
	}
}

// processGone reports whether pid has exited (a zombie counts: it no longer
// runs).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	if runtime.GOOS != "linux" {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never wrote its pid file")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitComm waits until process pid runs the program named comm.
func waitComm(t *testing.T, pid int, comm string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if strings.TrimSpace(string(b)) == comm {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d runs %q, not %q", pid, b, comm)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBashKillsProcessGroup(t *testing.T) {
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			ws := t.TempDir()
			pidFile := filepath.Join(ws, "pid")
			// A grandchild: sleep runs in the background of the shell.
			// "started" is written before the pid file, so the kill that
			// follows the pid file cannot come before it (a loaded
			// machine showed that order).
			args := obj{"command": fmt.Sprintf("sleep 300 & echo started; echo $! > %s; wait", pidFile)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if how == "timeout" {
				args["timeout"] = 2
			}
			done := make(chan Result, 1)
			go func() { done <- callCtx(t, ctx, Options{Workspace: ws}, "bash", args) }()
			pid := readPid(t, pidFile)
			if how == "cancel" {
				cancel()
			}
			var r Result
			select {
			case r = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("Run did not return after the kill")
			}
			want := "Command aborted"
			if how == "timeout" {
				want = "Command timed out after 2 seconds"
			}
			mustErr(t, r, "started", want)
			waitGone(t, pid)
		})
	}
}

func TestBashOnUpdate(t *testing.T) {
	var mu sync.Mutex
	var updates []string
	var times []time.Time
	returned := false
	lateCall := false
	o := Options{Workspace: t.TempDir(), OnUpdate: func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if returned {
			lateCall = true
		}
		updates = append(updates, s)
		times = append(times, time.Now())
	}}
	r := call(t, o, "bash", obj{"command": "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.15; done"})
	mu.Lock()
	returned = true
	mu.Unlock()
	mustOK(t, r)
	time.Sleep(250 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if lateCall {
		t.Fatal("OnUpdate called after Run returned")
	}
	if len(updates) < 3 {
		t.Fatalf("only %d updates: %q", len(updates), updates)
	}
	for i := 1; i < len(updates); i++ {
		if !strings.HasPrefix(updates[i], updates[i-1]) || len(updates[i]) <= len(updates[i-1]) {
			t.Fatalf("update %d %q does not extend %q", i, updates[i], updates[i-1])
		}
		if gap := times[i].Sub(times[i-1]); gap < 90*time.Millisecond {
			t.Fatalf("updates %v apart: not throttled", gap)
		}
	}
	if !strings.HasPrefix(updates[0], "line1") {
		t.Fatalf("first update %q", updates[0])
	}
	if !strings.HasPrefix(r.Content, updates[len(updates)-1]) {
		t.Fatalf("final content %q does not extend the last update %q", r.Content, updates[len(updates)-1])
	}
}

func TestBashOnUpdatePanicIsContained(t *testing.T) {
	o := Options{Workspace: t.TempDir(), OnUpdate: func(string) { panic("caller bug") }}
	r := call(t, o, "bash", obj{"command": "echo a; sleep 0.3; echo b"})
	mustOK(t, r)
	if r.Content != "a\nb" {
		t.Fatalf("got %q", r.Content)
	}
}

// TestBashEndsTheProcessesOfTheCall: whatever a command leaves running in
// the background (`cmd &`, `setsid`, a child that clears its environment)
// is gone when the call returns, however it ends; another call's
// processes are not touched.
// Spec 14.4.1.
func TestBashEndsTheProcessesOfTheCall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes are found through /proc")
	}
	// A detached process writes the pid file on its own time.
	const untilPid = "while [ ! -s pid ]; do sleep 0.01; done; "
	for _, tc := range []struct {
		name, command string
		abort         bool
	}{
		{name: "background of a finished call", command: "sleep 300 & echo $! > pid; echo started"},
		{name: "nohup of a finished call", command: "nohup sleep 300 >/dev/null 2>&1 & echo $! > pid; echo started"},
		{name: "setsid of a finished call", command: "setsid -f sh -c 'echo $$ > pid; exec sleep 300' >/dev/null 2>&1; " + untilPid + "echo started"},
		{name: "cleared environment in the group", command: "env -i sleep 300 & echo $! > pid; echo started"},
		{name: "cleared environment under a detached parent",
			command: "setsid -f sh -c 'env -i sleep 300 & echo $! > pid; wait' >/dev/null 2>&1; " + untilPid + "echo started"},
		{name: "setsid then abort", command: "echo started; setsid sleep 300 & echo $! > pid; wait", abort: true},
		{name: "setsid fork then abort", command: "echo started; setsid -f sh -c 'echo $$ > pid; exec sleep 300'; sleep 300", abort: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan Result, 1)
			go func() { done <- callCtx(t, ctx, Options{Workspace: ws}, "bash", obj{"command": tc.command}) }()
			pid := readPid(t, filepath.Join(ws, "pid"))
			defer syscall.Kill(pid, syscall.SIGKILL)
			if tc.abort {
				waitComm(t, pid, "sleep") // detached: past setsid
				cancel()
			}
			var r Result
			select {
			case r = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("Run did not return")
			}
			mustContain(t, r.Content, "started")
			if !processGone(pid) {
				t.Fatalf("process %d of the call still runs after the call returned (%s)", pid, r.Content)
			}
		})
	}
}

// TestBashEndsOnlyItsOwnProcesses: one call's end leaves a concurrent
// call's background process running until that call ends.
// Spec 14.4.1.
func TestBashEndsOnlyItsOwnProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes are found through /proc")
	}
	ws := t.TempDir()
	long := make(chan Result, 1)
	go func() {
		long <- call(t, Options{Workspace: ws}, "bash", obj{"command": "sleep 300 & echo $! > a; while [ ! -f go ]; do sleep 0.05; done; echo long"})
	}()
	pidA := readPid(t, filepath.Join(ws, "a"))
	defer syscall.Kill(pidA, syscall.SIGKILL)
	r := call(t, Options{Workspace: ws}, "bash", obj{"command": "sleep 300 & echo $! > b; echo short"})
	mustOK(t, r)
	pidB := readPid(t, filepath.Join(ws, "b"))
	defer syscall.Kill(pidB, syscall.SIGKILL)
	if !processGone(pidB) {
		t.Fatalf("the short call's background process %d still runs", pidB)
	}
	if processGone(pidA) {
		t.Fatalf("the short call's end killed the long call's background process %d", pidA)
	}
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case r = <-long:
	case <-time.After(15 * time.Second):
		t.Fatal("the long call did not return")
	}
	mustOK(t, r)
	if !processGone(pidA) {
		t.Fatalf("the long call's background process %d still runs after its call returned", pidA)
	}
}

// outputFiles lists the full outputs kept in dir and their total size.
// outputDir is a new directory for full outputs in ws: its path relative
// to ws (Options.OutputDir) and its absolute path.
func outputDir(t *testing.T, ws string) (rel, abs string) {
	t.Helper()
	abs, err := os.MkdirTemp(ws, "out-")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Base(abs), abs
}

func outputFiles(t *testing.T, dir string) (names []string, total int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name())
		total += fi.Size()
	}
	return names, total
}

// TestBashFullOutputsAreBounded: the full outputs of truncated calls kept
// in one OutputDir (a session's) never exceed KeptOutputFiles files or
// KeptOutputBytes; the oldest go first, the one a result names stays.
// Spec 14.3.3.
func TestBashFullOutputsAreBounded(t *testing.T) {
	ws := t.TempDir()
	t.Run("by count", func(t *testing.T) {
		rel, tmp := outputDir(t, ws)
		var paths []string
		for i := 0; i < KeptOutputFiles+5; i++ {
			r := call(t, Options{Workspace: ws, OutputDir: rel}, "bash", obj{"command": "seq 1 3000"})
			mustOK(t, r)
			path, _ := r.Details["fullOutputPath"].(string)
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("call %d: the full output the result names is gone: %v", i, err)
			}
			paths = append(paths, path)
			if names, _ := outputFiles(t, tmp); len(names) > KeptOutputFiles {
				t.Fatalf("after %d calls %d full outputs are kept, the bound is %d", i+1, len(names), KeptOutputFiles)
			}
		}
		for i, p := range paths {
			_, err := os.Stat(p)
			if kept := err == nil; kept != (i >= 5) {
				t.Fatalf("output %d of %d kept: %v", i+1, len(paths), kept)
			}
		}
	})
	t.Run("by size", func(t *testing.T) {
		rel, tmp := outputDir(t, ws)
		part := KeptOutputBytes/3 + 1<<20 // three do not fit
		var paths []string
		for i := 0; i < 3; i++ {
			r := call(t, Options{Workspace: ws, OutputDir: rel}, "bash", obj{"command": fmt.Sprintf("head -c %d /dev/zero | tr '\\0' 'x' | fold -w 100", part)})
			mustOK(t, r)
			path, _ := r.Details["fullOutputPath"].(string)
			paths = append(paths, path)
		}
		if _, total := outputFiles(t, tmp); total > KeptOutputBytes {
			t.Fatalf("%d bytes of full outputs are kept, the bound is %d", total, KeptOutputBytes)
		}
		if _, err := os.Stat(paths[0]); err == nil {
			t.Fatal("the oldest output is kept past the size bound")
		}
		if _, err := os.Stat(paths[2]); err != nil {
			t.Fatalf("the newest output is gone: %v", err)
		}
	})
	t.Run("one output larger than the bound", func(t *testing.T) {
		rel, tmp := outputDir(t, ws)
		r := call(t, Options{Workspace: ws, OutputDir: rel}, "bash", obj{"command": fmt.Sprintf("seq 1 %d", KeptOutputBytes/4)})
		mustOK(t, r)
		mustContain(t, r.Content, fmt.Sprintf("Full output (cut at %s): ", formatSize(KeptOutputBytes)))
		if _, total := outputFiles(t, tmp); total != KeptOutputBytes {
			t.Fatalf("%d bytes kept of an output over the bound %d", total, KeptOutputBytes)
		}
		path, _ := r.Details["fullOutputPath"].(string)
		if !strings.HasPrefix(readFile(t, path), "1\n2\n3\n") {
			t.Fatal("the kept part is not the output's start")
		}
	})
}
