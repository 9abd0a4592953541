package tools

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// osFS is the local file system (Local's FS). With dirs (confine: the
// workspace as given and its real location) an operation on a path
// inside the workspace runs through an os.Root opened on the workspace
// (docs/security.md), so a symbolic link swapped in after resolvePath
// looked at the path cannot lead the operation out: it fails with
// errOutside. Paths outside the workspace are the local file system's;
// resolvePath has refused them as operation targets.
type osFS struct {
	dirs []string
}

// errOutside is the error of an operation a symbolic link would have led
// out of the workspace.
var errOutside = errors.New("a symbolic link in the path leads outside the workspace")

// confine is the local file system with every path inside ws resolved
// beneath it.
func confine(ws string) FS {
	c := osFS{dirs: []string{ws, ws}}
	if real, err := realPath(osFS{}, ws); err == nil {
		c.dirs[1] = real
	}
	return c
}

// fileOps are the file operations of osFS, on absolute paths (osOps) or
// on names inside an os.Root (*os.Root itself).
type fileOps interface {
	Stat(string) (fs.FileInfo, error)
	Lstat(string) (fs.FileInfo, error)
	Readlink(string) (string, error)
	OpenFile(string, int, fs.FileMode) (*os.File, error)
	MkdirAll(string, fs.FileMode) error
	Rename(string, string) error
	Remove(string) error
}

type osOps struct{}

func (osOps) Stat(p string) (fs.FileInfo, error)  { return os.Stat(p) }
func (osOps) Lstat(p string) (fs.FileInfo, error) { return os.Lstat(p) }
func (osOps) Readlink(p string) (string, error)   { return os.Readlink(p) }
func (osOps) OpenFile(p string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(p, flag, perm)
}
func (osOps) MkdirAll(p string, perm fs.FileMode) error { return os.MkdirAll(p, perm) }
func (osOps) Rename(a, b string) error                  { return os.Rename(a, b) }
func (osOps) Remove(p string) error                     { return os.Remove(p) }

// in runs op on p: in the workspace's root when p is inside it, else on
// the local file system.
func in[T any](c osFS, p string, op func(fileOps, string) (T, error)) (T, error) {
	for _, d := range c.dirs {
		if within(d, p) {
			rel, _ := filepath.Rel(d, p)
			r, err := os.OpenRoot(d)
			if err != nil {
				var zero T
				return zero, err
			}
			defer r.Close()
			v, err := op(r, rel)
			return v, outsideErr(p, err)
		}
	}
	return op(osOps{}, p)
}

// outsideErr names an escape the root refused (os has no exported error
// for it) as errOutside.
func outsideErr(p string, err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return &fs.PathError{Op: "open", Path: p, Err: errOutside}
	}
	return err
}

// none adapts an operation without a value to in.
func none(err error) (struct{}, error) { return struct{}{}, err }

func (c osFS) Stat(p string) (fs.FileInfo, error)  { return in(c, p, fileOps.Stat) }
func (c osFS) Lstat(p string) (fs.FileInfo, error) { return in(c, p, fileOps.Lstat) }
func (c osFS) Readlink(p string) (string, error)   { return in(c, p, fileOps.Readlink) }

// ReadDir lists p sorted by name, as os.ReadDir does.
func (c osFS) ReadDir(p string) ([]fs.DirEntry, error) {
	return in(c, p, func(ops fileOps, name string) ([]fs.DirEntry, error) {
		d, err := ops.OpenFile(name, os.O_RDONLY, 0)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		entries, err := d.ReadDir(-1)
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		return entries, err
	})
}

func (c osFS) MkdirAll(p string, perm fs.FileMode) error {
	_, err := in(c, p, func(ops fileOps, name string) (struct{}, error) { return none(ops.MkdirAll(name, perm)) })
	return err
}

func (c osFS) OpenRegular(p string) (io.ReadCloser, fs.FileInfo, error) {
	var fi fs.FileInfo
	f, err := in(c, p, func(ops fileOps, name string) (f *os.File, err error) {
		f, fi, err = openRegular(ops, name)
		return f, err
	})
	if err != nil {
		return nil, nil, err // not a nil *os.File in the interface
	}
	return f, fi, nil
}

func (c osFS) ReplaceFile(p string, data []byte) error {
	_, err := in(c, p, func(ops fileOps, name string) (struct{}, error) { return none(replaceFile(ops, name, data)) })
	return err
}

// openRegular opens p for reading only when it is a regular file. Any
// other kind is refused with a *NotRegularError before it is opened
// (opening a device can have effects; opening a FIFO blocks until a
// writer comes), and again after by openNoBlock, so a FIFO swapped in
// between the check and the open is refused too. fi is the opened file's.
func openRegular(ops fileOps, p string) (*os.File, fs.FileInfo, error) {
	fi, err := ops.Stat(p)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Kind: fileKind(fi.Mode())}
	}
	return openNoBlock(ops, p)
}

// openNoBlock is openRegular's open: it does not block (O_NONBLOCK), the
// opened file's fstat refuses anything but a regular file, and the file
// is returned in blocking mode.
func openNoBlock(ops fileOps, p string) (*os.File, fs.FileInfo, error) {
	f, err := ops.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Kind: fileKind(fi.Mode())}
	}
	if err == nil {
		err = syscall.SetNonblock(int(f.Fd()), false)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
