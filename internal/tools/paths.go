package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinks bounds symbolic-link resolution, like the kernel's ELOOP.
const maxSymlinks = 40

// workspace returns the absolute, cleaned workspace directory.
func (o *Options) workspace() string {
	if ws, err := filepath.Abs(o.Workspace); err == nil { // "": the cwd
		return ws
	}
	return filepath.Join("/", o.Workspace) // no cwd to resolve against
}

// cleanArg trims what models sometimes add around a path: surrounding
// whitespace and a leading "@".
func cleanArg(p string) string {
	p = strings.TrimSpace(p)
	return strings.TrimPrefix(p, "@")
}

// resolvePath turns the path the model gave into an absolute, cleaned path
// (relative paths resolve against the workspace; "" is the workspace) and,
// with Confine, refuses it when its real location is outside the workspace.
// The returned path is the one to operate on: the check resolves exactly it.
// With replace (write, edit: the replacement is renamed over the path) it
// returns the real location, every symbolic link resolved, so a link to a
// file is followed (the file changes, the link stays) and, with Confine,
// the file replaced is the one checked inside the workspace.
func (o *Options) resolvePath(given string, replace bool) (string, error) {
	ws := o.workspace()
	p := cleanArg(given)
	var abs string
	switch {
	case p == "":
		abs = ws
	case filepath.IsAbs(p):
		abs = filepath.Clean(p)
	default:
		abs = filepath.Join(ws, p)
	}
	if !o.Confine && !replace {
		return abs, nil
	}
	real, err := realPath(o.fs(), abs)
	if err != nil {
		return "", fmt.Errorf("cannot resolve path %s: %v", given, err)
	}
	if o.Confine && !within(o.realWorkspace(), real) {
		return "", fmt.Errorf("path %s is outside the workspace %s", given, ws)
	}
	if replace {
		return real, nil
	}
	return abs, nil
}

// realWorkspace is the workspace's real location (as given when it
// cannot be resolved).
func (o *Options) realWorkspace() string {
	ws := o.workspace()
	if real, err := realPath(o.fs(), ws); err == nil {
		return real
	}
	return ws
}

// ruleOn returns PathRule for real locations (nil without one): a path
// below the workspace's real location is shown to it under the workspace
// as given, as the workflow saw the path argument. shown is the path
// relative to the workspace, or absolute outside it.
func (o *Options) ruleOn() func(real string) (why, shown string) {
	if o.PathRule == nil {
		return nil
	}
	ws, wsReal := o.workspace(), o.realWorkspace()
	return func(real string) (string, string) {
		if !within(wsReal, real) {
			return o.PathRule(real), real
		}
		rel, _ := filepath.Rel(wsReal, real)
		return o.PathRule(filepath.Join(ws, rel)), filepath.ToSlash(rel)
	}
}

// ruled returns the real location of abs (the path shown as given), or
// the one-line error of a call of tool whose path a rule refuses there.
// Without rules it returns abs.
func (o *Options) ruled(tool, abs, shown string) (string, error) {
	rule := o.ruleOn()
	if rule == nil {
		return abs, nil
	}
	real, err := realPath(o.fs(), abs)
	if err != nil {
		return "", fmt.Errorf("cannot resolve path %s: %v", shown, err)
	}
	if why, at := rule(real); why != "" {
		return "", fmt.Errorf("%s: %s resolves to %s, %s", tool, shown, at, why)
	}
	return real, nil
}

// target resolves the path argument of read, write or edit (empty:
// refused): its location to operate on (for write and edit,
// replace, the real location), checked against the path rules, and the
// path as shown; fail is the call's error result.
func (o *Options) target(tool, given string, replace bool) (abs, shown string, fail *Result) {
	if shown = cleanArg(given); shown == "" {
		return "", "", new(missing(tool, "path"))
	}
	abs, err := o.resolvePath(given, replace)
	if err == nil {
		abs, err = o.ruled(tool, abs, shown)
	}
	if err != nil {
		return "", "", new(errorf("%v", err))
	}
	return abs, shown, nil
}

// within reports whether p is dir or below it (both absolute and clean).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// realPath resolves every symbolic link along the absolute path p, the way
// the kernel would when opening it: components are taken left to right, ".."
// applies to the resolved prefix, and a link's target (dangling or not) is
// followed. The part from the first missing component on is kept literally.
func realPath(fsys FS, p string) (string, error) {
	queue := splitPath(p)
	cur := string(filepath.Separator)
	links := 0
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := fsys.Lstat(next)
		if err != nil {
			// Missing (or not traversable): nothing below it can be a link.
			return filepath.Join(append([]string{next}, queue...)...), nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := fsys.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		queue = append(splitPath(target), queue...)
	}
	return cur, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// statDir resolves and stats the path argument of grep, find or ls ("":
// the workspace); with dirOnly anything but a directory is refused. fail
// is the call's error result.
func (o *Options) statDir(op, arg string, dirOnly bool) (abs string, fi fs.FileInfo, fail *Result) {
	shown := displayPath(arg)
	abs, err := o.resolvePath(arg, false)
	if err != nil {
		return "", nil, new(errorf("%v", err))
	}
	fi, err = o.fs().Stat(abs)
	switch {
	case err != nil:
		return "", nil, new(errorf("Path not found: %s", shown))
	case !dirOnly || fi.IsDir():
		return abs, fi, nil
	case !fi.Mode().IsRegular(): // a FIFO, a socket, a device
		return "", nil, new(errorf("%s: %s is a %s, not a directory", op, shown, fileKind(fi.Mode())))
	}
	return "", nil, new(errorf("Not a directory: %s", shown))
}

// relOut formats a path found under root for grep and find output: relative
// to the workspace when it is inside it, else relative to root.
func (o *Options) relOut(root, p string) string {
	ws := o.workspace()
	if within(ws, p) {
		if rel, err := filepath.Rel(ws, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	if rel, err := filepath.Rel(root, p); err == nil && rel != "." {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(p)
}
