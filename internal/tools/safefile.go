package tools

import (
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// NotRegularError reports a path that names a FIFO, a socket, a device or
// a directory where a tool needs a regular file; Kind says which ("named
// pipe", "socket", "character device", ...).
type NotRegularError struct{ Kind string }

func (e *NotRegularError) Error() string { return "a " + e.Kind + ", not a regular file" }

// notRegular returns a NotRegularError found in err as the call's error
// result, naming the tool and the path as shown; ok is false when err is
// not one.
func notRegular(op, shown string, err error) (Result, bool) {
	var nr *NotRegularError
	if !errors.As(err, &nr) {
		return Result{}, false
	}
	return errorf("%s: %s is a %s, not a regular file", op, shown, nr.Kind), true
}

// fileKind names the type of a file that is not a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// errTooLarge: the file holds more than the caller's limit.
var errTooLarge = errors.New("file is larger than the limit")

// readRegular reads the whole of the regular file at path, at most limit
// bytes of it: a larger file (by its size, or by what reading it yields, as
// for /proc files that report size 0) is errTooLarge and is not held in
// memory beyond limit+1 bytes.
func readRegular(fsys FS, path string, limit int64) ([]byte, error) {
	f, fi, err := fsys.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// replaceFile makes data the content of the file at path (a name in ops,
// its resolved location: see resolvePath) crash-safely, as docs/tools.md
// says: a hidden temporary file beside it, synced, given the old mode and
// owner, renamed over path, the directory synced. An existing path that
// is not a regular file is refused with a *NotRegularError, one this
// process may not open for writing with that error; a new file gets mode
// 0644 less the umask.
func replaceFile(ops fileOps, path string, data []byte) (err error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	var old fs.FileInfo
	switch fi, err := ops.Lstat(path); {
	case err == nil && !fi.Mode().IsRegular():
		return &NotRegularError{Kind: fileKind(fi.Mode())}
	case err == nil:
		old = fi
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if old != nil {
		// A file this process may not write (read-only) stays refused, as
		// when it was written in place: the rename alone would replace it.
		// Opening for writing, without truncating and without blocking,
		// checks exactly that and changes nothing.
		w, err := ops.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return err
		}
		w.Close()
	}
	perm := fs.FileMode(0o644) // the umask applies, as for os.WriteFile
	if old != nil {
		perm = 0o600 // until the old mode is set below, without the umask
	}
	f, tmp, err := createTemp(ops, dir, base, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			ops.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if old != nil {
		if st, ok := old.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
			_ = f.Chown(int(st.Uid), int(st.Gid)) // best effort: only root may give a file away
		}
		// After the chown, which clears set-id bits.
		if err := f.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := ops.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(ops, dir)
	return nil
}

// tempPrefix is the start of the names of base's temporary files (base cut
// to keep the names legal); they end in ".tmp" and carry the creating
// process's pid: ".base.<pid>-<random>.tmp".
func tempPrefix(base string) string {
	if len(base) > 200 {
		base = base[:200]
	}
	return "." + base + "."
}

// createTemp creates a new temporary file for base in dir with perm less the
// umask, after removing the ones a killed process left there; name is its
// path in ops.
func createTemp(ops fileOps, dir, base string, perm fs.FileMode) (f *os.File, name string, err error) {
	removeStaleTemps(ops, dir, base)
	prefix := tempPrefix(base) + strconv.Itoa(os.Getpid()) + "-"
	for try := 0; ; try++ {
		name = filepath.Join(dir, prefix+rand.Text()[:10]+".tmp")
		f, err = ops.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
			return f, name, err
		}
	}
}

// removeStaleTemps removes base's temporary files in dir whose process no
// longer exists on this machine: what a write killed mid-way left behind.
// A file of a live process (here, or a reused pid) is kept. Errors are
// ignored: a leftover is only wasted space.
func removeStaleTemps(ops fileOps, dir, base string) {
	d, err := ops.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return
	}
	prefix := tempPrefix(base)
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || !strings.HasSuffix(rest, ".tmp") || !e.Type().IsRegular() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if unix.Kill(pid, 0) == unix.ESRCH {
			ops.Remove(filepath.Join(dir, name))
		}
	}
}

// syncDir flushes dir's entries (a rename in it) to disk. Best effort: the
// rename is done and visible either way, and some file systems refuse to
// sync a directory.
func syncDir(ops fileOps, dir string) {
	if d, err := ops.OpenFile(dir, os.O_RDONLY, 0); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
