package tools

import (
	"cmp"
	"errors"
	"io"
	"io/fs"
	"os/exec"
	"syscall"
)

// Runner is where a tool call acts: it starts bash's commands and gives
// the file tools (read, write, edit, grep, find, ls) their file system.
// Every process and every file access of a tool goes through the
// Options.Runner of the call, so a sandbox is one more implementation of
// this interface, chosen where the tools are set up. Local, the worker's
// own process and file system, is the one of today (and the default).
type Runner interface {
	// Start starts cmd. Its processes are the call's: Process.Wait and
	// Process.Kill end every one of them, whatever it did to escape
	// (a background job, a new session, a daemon).
	Start(cmd Command) (Process, error)
	// FS is the file system the file tools read and write.
	FS() FS
}

// Command is one shell command of a tool call.
type Command struct {
	// Script is run by "bash -c" (or "sh -c" where there is no bash).
	Script string
	// Dir is its working directory; Env its whole environment.
	Dir string
	Env []string
	// Output receives stdout and stderr, merged, from one goroutine at a
	// time.
	Output io.Writer
	// Stdin is the command's input (nil: empty): an *os.File is handed
	// to it as it is, as a stdio MCP server's pipe is. Stderr, when set,
	// gets stderr apart from Output (an MCP server's log beside its
	// protocol).
	Stdin  io.Reader
	Stderr io.Writer
}

// Process is a started Command.
type Process interface {
	// Wait waits for the command to exit, ends every process it left
	// running, and returns once its output has been written to
	// Command.Output. The error is a failure to wait, never the
	// command's own (a non-zero exit is in Exit). It is called once.
	Wait() (Exit, error)
	// Kill kills the command and every process it started; Wait then
	// returns. It may be called while Wait waits.
	Kill()
}

// Exit is how a command ended.
type Exit struct {
	// Code is the exit code; 128+N for a command killed by signal N.
	Code int
	// Signal is the signal that killed the command (0: it exited).
	Signal syscall.Signal
	// Limit names the runner's limit that ended the command, e.g. "CPU
	// time limit of 5 s (tools.sandbox.cpuSeconds)"; "" when none did or
	// the runner cannot tell.
	Limit string
	// MaybeLimit names a limit of the runner that the command may have
	// hit, with the evidence, e.g. "CPU time limit of 1 s
	// (tools.sandbox.cpuSeconds): its processes used 1.2 s of CPU time",
	// where the evidence makes it likely but not certain (a program the
	// limit ended without a word); "" when there is no such sign. It is
	// "" when Limit is set.
	MaybeLimit string
	// Hit names a limit of the runner that a command which exited 0 hit
	// without being ended by it, with what it did, e.g. "memory limit of
	// 64 MiB (tools.sandbox.memoryMB): the kernel's OOM killer ended 1
	// process of the command at the limit" (a background job or a test
	// runner's worker killed, the command's shell going on); "" when it
	// hit none or Code is not 0.
	Hit string
}

// ExitOf is how a command ended, from the error of its exec.Cmd.Wait:
// nil is exit 0, an *exec.ExitError its code (128+N for signal N), any
// other error a failure to wait, returned as is.
func ExitOf(waitErr error) (Exit, error) {
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		return Exit{}, nil
	case !errors.As(waitErr, &ee):
		return Exit{}, waitErr
	}
	if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return Exit{Code: 128 + int(st.Signal()), Signal: st.Signal()}, nil
	}
	return Exit{Code: ee.ExitCode()}, nil
}

// FS is a tool call's file system. Paths are absolute. Errors are those
// of package os (*fs.PathError and the fs.Err* sentinels), or a
// *NotRegularError where a regular file is needed.
type FS interface {
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	MkdirAll(name string, perm fs.FileMode) error
	// OpenRegular opens a regular file for reading, refusing any other
	// kind without blocking on it or opening it for effect (a FIFO, a
	// device); fi is the opened file's.
	OpenRegular(name string) (f io.ReadCloser, fi fs.FileInfo, err error)
	// ReplaceFile makes data the content of the regular file name (its
	// real location, no symbolic link), crash-safely: after a kill at any
	// moment the file holds its old content or the new one, in full. An
	// existing file keeps its mode and owner.
	ReplaceFile(name string, data []byte) error
}

// Local is the Runner of the worker's own process and file system:
// commands run as the worker's children, each in its own process group
// and marked with CallMarkerEnv, and the files are the worker's.
var Local Runner = localRunner{}

type localRunner struct{}

func (localRunner) FS() FS { return osFS{} }

// runner returns the call's Runner (Local when none is set).
func (o *Options) runner() Runner { return cmp.Or(o.Runner, Local) }

// fs returns the call's file system: with Confine, the local one
// resolves paths inside the workspace beneath it (confine).
func (o *Options) fs() FS {
	f := o.runner().FS()
	if _, local := f.(osFS); local && o.Confine {
		return confine(o.workspace())
	}
	return f
}
