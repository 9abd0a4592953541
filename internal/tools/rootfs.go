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

// confinedFS is the local file system of a call with tools.confine: an
// operation on a path inside the workspace runs through an os.Root opened
// on the workspace, so every component of the path is resolved beneath
// it (os.Root: openat one component at a time from the workspace's
// descriptor, a link followed only when it stays beneath). A symbolic link
// swapped in after checkInside looked at the path cannot lead the
// operation out: it fails with errOutside. Paths outside the workspace
// (the components above it that realPath walks) are the local file
// system's; checkInside has refused them as operation targets.
type confinedFS struct {
	// dirs are the workspace as given and its real location.
	dirs [2]string
}

// errOutside is the error of an operation a symbolic link would have led
// out of the workspace.
var errOutside = errors.New("a symbolic link in the path leads outside the workspace")

func confine(ws string) FS {
	c := confinedFS{dirs: [2]string{ws, ws}}
	if real, err := realPath(localFS{}, ws); err == nil {
		c.dirs[1] = real
	}
	return c
}

// root opens the root holding p and returns p's name in it; ok is false
// for a path outside the workspace.
func (c confinedFS) root(p string) (r *os.Root, name string, ok bool, err error) {
	for _, d := range c.dirs {
		if within(d, p) {
			rel, _ := filepath.Rel(d, p)
			r, err := os.OpenRoot(d)
			return r, rel, true, err
		}
	}
	return nil, "", false, nil
}

// inside runs op on p in the workspace's root, or local on p outside it.
func inside[T any](c confinedFS, p string, op func(*os.Root, string) (T, error), local func(string) (T, error)) (T, error) {
	r, name, ok, err := c.root(p)
	if !ok {
		return local(p)
	}
	var zero T
	if err != nil {
		return zero, err
	}
	defer r.Close()
	v, err := op(r, name)
	return v, outsideErr(p, err)
}

// outsideErr names an escape the root refused (os has no exported error
// for it) as errOutside.
func outsideErr(p string, err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return &fs.PathError{Op: "open", Path: p, Err: errOutside}
	}
	return err
}

func (c confinedFS) Stat(p string) (fs.FileInfo, error) {
	return inside(c, p, (*os.Root).Stat, os.Stat)
}

func (c confinedFS) Lstat(p string) (fs.FileInfo, error) {
	return inside(c, p, (*os.Root).Lstat, os.Lstat)
}

func (c confinedFS) Readlink(p string) (string, error) {
	return inside(c, p, (*os.Root).Readlink, os.Readlink)
}

func (c confinedFS) ReadDir(p string) ([]fs.DirEntry, error) {
	return inside(c, p, func(r *os.Root, name string) ([]fs.DirEntry, error) {
		d, err := r.Open(name)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		entries, err := d.ReadDir(-1)
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		return entries, err
	}, os.ReadDir)
}

func (c confinedFS) MkdirAll(p string, perm fs.FileMode) error {
	_, err := inside(c, p, func(r *os.Root, name string) (struct{}, error) {
		return struct{}{}, r.MkdirAll(name, perm)
	}, func(p string) (struct{}, error) { return struct{}{}, os.MkdirAll(p, perm) })
	return err
}

func (c confinedFS) OpenRegular(p string) (io.ReadCloser, fs.FileInfo, error) {
	type opened struct {
		f  *os.File
		fi fs.FileInfo
	}
	o, err := inside(c, p, func(r *os.Root, name string) (opened, error) {
		f, fi, err := openRegularIn(rootOps{r}, name)
		return opened{f, fi}, err
	}, func(p string) (opened, error) {
		f, fi, err := openRegular(p)
		return opened{f, fi}, err
	})
	if err != nil {
		return nil, nil, err
	}
	return o.f, o.fi, nil
}

func (c confinedFS) ReplaceFile(p string, data []byte) error {
	_, err := inside(c, p, func(r *os.Root, name string) (struct{}, error) {
		return struct{}{}, replaceFileIn(rootOps{r}, name, data)
	}, func(p string) (struct{}, error) { return struct{}{}, replaceFile(p, data) })
	return err
}

// fileOps are the file operations replaceFileIn and openRegularIn need,
// on absolute paths (osOps) or names inside an os.Root (rootOps).
type fileOps interface {
	Stat(string) (fs.FileInfo, error)
	Lstat(string) (fs.FileInfo, error)
	OpenFile(string, int, fs.FileMode) (*os.File, error)
	Rename(string, string) error
	Remove(string) error
}

type osOps struct{}

func (osOps) Stat(p string) (fs.FileInfo, error)  { return os.Stat(p) }
func (osOps) Lstat(p string) (fs.FileInfo, error) { return os.Lstat(p) }
func (osOps) OpenFile(p string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(p, flag, perm)
}
func (osOps) Rename(a, b string) error { return os.Rename(a, b) }
func (osOps) Remove(p string) error    { return os.Remove(p) }

type rootOps struct{ r *os.Root }

func (o rootOps) Stat(p string) (fs.FileInfo, error)  { return o.r.Stat(p) }
func (o rootOps) Lstat(p string) (fs.FileInfo, error) { return o.r.Lstat(p) }
func (o rootOps) OpenFile(p string, flag int, perm fs.FileMode) (*os.File, error) {
	return o.r.OpenFile(p, flag, perm)
}
func (o rootOps) Rename(a, b string) error { return o.r.Rename(a, b) }
func (o rootOps) Remove(p string) error    { return o.r.Remove(p) }

// openRegularIn is openRegular through ops: refuse a non-regular file
// before opening it, open without blocking, refuse again on the opened
// file's fstat, and return it in blocking mode.
func openRegularIn(ops fileOps, p string) (*os.File, fs.FileInfo, error) {
	fi, err := ops.Stat(p)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Kind: fileKind(fi.Mode())}
	}
	f, err := ops.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err == nil && !fi.Mode().IsRegular() {
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
