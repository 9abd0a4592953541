//go:build linux

package tools

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

const (
	// maxKillRounds bounds the scans of one call's end: each round kills
	// what the previous one missed (a child forked meanwhile); killed
	// processes cannot fork, so two rounds are the rule.
	maxKillRounds = 16
	// exitWait is how long the end of a call waits for the processes it
	// killed to exit (a process in an uninterruptible sleep takes longer;
	// it is reaped in the background when it exits).
	exitWait = 2 * time.Second
)

// procInfo is what /proc/<pid>/stat says of a process.
type procInfo struct {
	proc            procfs.Proc
	pid, ppid, pgid int
	start           uint64 // start time in clock ticks: tells a reused pid apart
	zombie          bool   // exited, not yet reaped
}

// endedProc is a process of the call that was killed (or found exited):
// a pidfd (-1 without pidfd support) names it, whatever becomes of its pid.
type endedProc struct {
	info procInfo
	fd   int
}

// endCallProcesses kills every process of the call whose marker is token
// and whose shell is shell, except the shell itself (its exec.Cmd's),
// waits briefly for them to exit, and reaps, by pidfd, those that are the
// worker's children (docs/tools.md, "What a bash call leaves behind"). A
// process is the call's when its environment carries the call's marker,
// when it is in the shell's process group and carries no other call's
// marker, or when its parent is the call's.
func endCallProcesses(token string, shell int) {
	self := os.Getpid()
	mine := CallMarkerEnv + "=" + token
	ended := map[int]*endedProc{}
	for round := 0; round < maxKillRounds; round++ {
		fresh := 0
		for _, p := range callProcs(mine, shell, self) {
			if e, ok := ended[p.pid]; p.pid == shell || ok && e.info.start == p.start {
				continue
			}
			if e := endProc(p); e != nil {
				if old := ended[p.pid]; old != nil && old.fd >= 0 {
					unix.Close(old.fd)
				}
				ended[p.pid] = e
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	var fds []int
	for _, e := range ended {
		if e.fd >= 0 {
			fds = append(fds, e.fd)
		}
	}
	_, _ = AwaitPidfds(fds, exitWait)
	for _, e := range ended {
		reap(e)
	}
}

// callProcs returns the processes (read from /proc) that belong to the
// call.
func callProcs(mine string, shell, self int) []procInfo {
	procs, _ := procfs.AllProcs() // none when /proc cannot be read
	children := map[int][]procInfo{}
	var out, queue []procInfo
	seen := map[int]bool{}
	for _, proc := range procs {
		p, ok := statOf(proc)
		if !ok || p.pid == self {
			continue
		}
		children[p.ppid] = append(children[p.ppid], p)
		if p.zombie {
			// Its environment is gone; only its group says whose it is.
			if p.pgid == shell && p.pid != shell {
				seen[p.pid] = true
				queue = append(queue, p)
			}
			continue
		}
		marked, other := environMarker(p.proc, mine)
		if marked || (p.pgid == shell && !other) {
			seen[p.pid] = true
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		for _, c := range children[p.pid] {
			if !seen[c.pid] {
				seen[c.pid] = true
				queue = append(queue, c)
			}
		}
	}
	return out
}

// endProc kills p (a zombie is only held for reaping). It returns nil when
// p is gone or its pid now names another process.
func endProc(p procInfo) *endedProc {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		// No pidfds (Linux before 5.3): signal by pid once it is known
		// to name the same process; no reaping.
		if q, ok := statOf(p.proc); ok && q.start == p.start && !p.zombie {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			return &endedProc{info: p, fd: -1}
		}
		return nil
	}
	// The pidfd names whatever process had the pid when it was opened:
	// the one scanned, if its start time is unchanged.
	if q, ok := statOf(p.proc); !ok || q.start != p.start {
		unix.Close(fd)
		return nil
	}
	if !p.zombie {
		if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			unix.Close(fd)
			return nil
		}
	}
	return &endedProc{info: p, fd: fd}
}

// AwaitPidfds waits until every process the pidfds name has exited (its
// pidfd turns readable), for at most d; exited is false when one still
// runs then, err a failure to wait.
func AwaitPidfds(fds []int, d time.Duration) (exited bool, err error) {
	pending := make([]unix.PollFd, len(fds))
	for i, fd := range fds {
		pending[i] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	}
	deadline := time.Now().Add(d)
	for len(pending) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		_, err := unix.Poll(pending, int(left/time.Millisecond)+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return false, err
		}
		n := 0
		for _, p := range pending {
			if p.Revents == 0 {
				p.Events = unix.POLLIN
				pending[n] = p
				n++
			}
		}
		pending = pending[:n]
	}
	return true, nil
}

// reap waits for e when it is the worker's child, and releases its pidfd.
// A child that has not exited yet is waited for in the background.
func reap(e *endedProc) {
	if e.fd < 0 {
		return
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, e.fd, &info, unix.WEXITED|unix.WNOHANG, nil)
	if err != nil || info.Signo != 0 {
		// Reaped, or not the worker's child (ECHILD): its parent reaps it.
		unix.Close(e.fd)
		return
	}
	go func() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PIDFD, e.fd, &info, unix.WEXITED, nil)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		unix.Close(e.fd)
	}()
}

// statOf reads what /proc/<pid>/stat says of p now.
func statOf(p procfs.Proc) (procInfo, bool) {
	st, err := p.Stat()
	if err != nil {
		return procInfo{}, false
	}
	return procInfo{proc: p, pid: st.PID, ppid: st.PPID, pgid: st.PGRP, start: st.Starttime,
		zombie: st.State == "Z" || st.State == "X"}, true
}

// environMarker reports whether the environment of p carries the entry
// mine, or another call's marker. An environment that cannot be read
// (another user's process, a non-dumpable one) carries neither.
func environMarker(p procfs.Proc, mine string) (marked, other bool) {
	env, _ := p.Environ()
	for _, kv := range env {
		if kv == mine {
			return true, false
		}
		other = other || strings.HasPrefix(kv, CallMarkerEnv+"=")
	}
	return false, other
}
