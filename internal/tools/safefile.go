package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// NotRegularError reports a path that names a FIFO, a socket, a device or a
// directory where a tool needs a regular file (or, for find and ls, a
// directory). Its message is the one-line error the model sees.
type NotRegularError struct {
	Op   string // the tool, e.g. "grep" ("" until the tool fills it in)
	Path string // the path as the model gave it
	Kind string // what it is: "named pipe", "socket", "character device", ...
	Want string // what the tool needs: "regular file" (default) or "directory"
}

func (e *NotRegularError) Error() string {
	want := e.Want
	if want == "" {
		want = "regular file"
	}
	return fmt.Sprintf("%s: %s is a %s, not a %s", e.Op, e.Path, e.Kind, want)
}

// notRegular fills in the tool and the shown path of a NotRegularError found
// in err and returns it as the call's error result; ok is false when err is
// not one.
func notRegular(op, shown string, err error) (Result, bool) {
	var nr *NotRegularError
	if !errors.As(err, &nr) {
		return Result{}, false
	}
	e := *nr
	e.Op, e.Path = op, shown
	return errorf("%s", e.Error()), true
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

// isSpecial reports whether m is neither a regular file nor a directory (nor
// a symbolic link): a FIFO, a socket or a device.
func isSpecial(m fs.FileMode) bool {
	return !m.IsRegular() && !m.IsDir() && m&fs.ModeSymlink == 0
}

// errTooLarge: the file holds more than the caller's limit.
var errTooLarge = errors.New("file is larger than the limit")

// openRegular opens path for reading only when it is a regular file. Any
// other kind is refused with a *NotRegularError before it is opened (opening
// a device can have effects; opening a FIFO blocks until a writer comes), and
// again after: the open does not block (O_NONBLOCK) and the opened file is
// checked, so a FIFO swapped in between the check and the open is refused
// too. The returned file is in blocking mode; fi is its fstat.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Kind: fileKind(fi.Mode())}
	}
	return openNoBlock(path)
}

// openNoBlock is openRegular's open: non-blocking, then fstat on the opened
// descriptor, refusing anything but a regular file.
func openNoBlock(path string) (*os.File, fs.FileInfo, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, nil, &NotRegularError{Kind: kindOfStat(st.Mode)}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, nil, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// kindOfStat names a stat(2) file type.
func kindOfStat(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFIFO:
		return "named pipe"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	}
	return "special file"
}

// readRegular reads the whole of the regular file at path, at most limit
// bytes of it: a larger file (by its size, or by what reading it yields, as
// for /proc files that report size 0) is errTooLarge and is not held in
// memory beyond limit+1 bytes.
func readRegular(path string, limit int64) ([]byte, error) {
	f, fi, err := openRegular(path)
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
