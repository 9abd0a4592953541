package checkpoint

import (
	"bytes"
	"cmp"
	"context"
	"encoding/gob"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A Take's own stat walk (issue 42: "a checkpoint of an unchanged tree costs
// a stat walk"). The manifest, written after git's whole walk, stamps every
// file the store recorded or skipped, every .gitignore and every directory
// its walk saw. The next Take Lstats just those: none changed, it reuses the
// tree; only recorded files changed in place (no directory changed, so no
// path came or went), git adds just them; anything else or any doubt is
// git's whole walk again.

type stamp struct {
	Size, Mtime, Ctime int64
	Ino                uint64
	Mode               uint32 // st_mode
}

type manifest struct {
	Workspace string
	Start     int64 // unix ns when the walk the stamps come from began
	Tree      string
	Skipped   []string
	Paths     []string // stamped, in Stamps' order
	Stamps    []stamp
}

// walk stamps what lies under workspace but .git, the data dir (skip, relative)
// and nested repositories' contents: Lstat only, at most 200,000 paths.
func walk(workspace, skip string) (map[string]stamp, error) {
	seen := map[string]stamp{}
	err := filepath.WalkDir(workspace, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(workspace, p)
		if err != nil || len(seen) > 200_000 {
			return cmp.Or(err, errors.New("too many paths"))
		}
		if rel == skip || rel != "." && d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := stampOf(fi)
		if !ok {
			return errors.ErrUnsupported
		}
		seen[filepath.ToSlash(rel)] = st
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil && d.IsDir() && rel != "." {
			return filepath.SkipDir
		}
		return nil
	})
	return seen, err
}

// remember writes the manifest of a Take by git's whole walk, seen being
// what walk found before git ran; without one, the next Take walks again.
func (s *Store) remember(ctx context.Context, workspace string, start time.Time, seen map[string]stamp, tree string, skipped []string) {
	file := filepath.Join(s.dir, "manifest")
	os.Remove(file)
	out, err := s.git(ctx, workspace, "", "ls-files", "-z")
	want := map[string]bool{}
	for p, st := range seen {
		want[p] = st.Mode&syscall.S_IFMT == syscall.S_IFDIR || path.Base(p) == ".gitignore"
	}
	for _, p := range append(strings.Split(out, "\x00"), skipped...) {
		if _, ok := seen[strings.TrimSuffix(p, "/")]; !ok && p != "" {
			return // git recorded what the walk did not see
		}
		want[strings.TrimSuffix(p, "/")] = true
	}
	m := manifest{Workspace: workspace, Start: start.UnixNano(), Tree: tree, Skipped: skipped}
	for p, w := range want {
		if w && p != "" {
			m.Paths, m.Stamps = append(m.Paths, p), append(m.Stamps, seen[p])
		}
	}
	if err == nil {
		s.save(m)
	}
}

func (s *Store) save(m manifest) {
	var b bytes.Buffer
	file := filepath.Join(s.dir, "manifest")
	if gob.NewEncoder(&b).Encode(m) == nil && os.WriteFile(file+".new", b.Bytes(), 0o600) == nil {
		os.Rename(file+".new", file)
	}
}

// check Lstats the manifest's paths: ok with the recorded files that may
// have changed in place (restamped in m), !ok when git must walk.
func (s *Store) check(workspace string) (m manifest, changed []string, ok bool) {
	b, err := os.ReadFile(filepath.Join(s.dir, "manifest"))
	if err != nil || gob.NewDecoder(bytes.NewReader(b)).Decode(&m) != nil || m.Workspace != workspace || len(m.Paths) != len(m.Stamps) {
		return m, nil, false
	}
	// A stamp this close to its walk's start may hide a later edit ("racy
	// git"): a file system stamping whole seconds gets two, others 50 ms,
	// the clock's coarse tick and more.
	margin := int64(2 * time.Second)
	for _, st := range m.Stamps {
		if st.Ctime%1e9 != 0 {
			margin = int64(50 * time.Millisecond)
			break
		}
	}
	stampAt, done, err := stamper(workspace)
	if err != nil {
		return m, nil, false
	}
	defer done()
	for i, p := range m.Paths {
		st, err := stampAt(p)
		if err != nil {
			return m, nil, false
		}
		if st == m.Stamps[i] && max(st.Mtime, st.Ctime) < m.Start-margin {
			continue
		}
		kind := st.Mode & syscall.S_IFMT
		if m.Stamps[i].Mode&syscall.S_IFMT == syscall.S_IFDIR || kind != syscall.S_IFREG && kind != syscall.S_IFLNK ||
			kind == syscall.S_IFREG && st.Size > s.lim.MaxFileBytes || path.Base(p) == ".gitignore" || slices.Contains(m.Skipped, p) {
			return m, nil, false
		}
		m.Stamps[i], changed = st, append(changed, ":(literal)"+p+"\x00")
	}
	return m, changed, true
}
