package tools

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The full outputs' file names: outputPrefix, a random part, outputSuffix.
const (
	outputPrefix = "bash-"
	outputSuffix = ".log"
)

// rel is the path of an output file of a's relative to a.root.
func (a *outputAcc) rel(path string) string {
	return filepath.Join(a.dir, filepath.Base(path))
}

// prune removes the oldest full outputs in a.dir, through a.fsys, until
// the newest fit in KeptOutputFiles files and KeptOutputBytes: from the
// newest down, the first that does not fit goes with every older one. The
// one just written (a.path) and the outputs still being written stay
// whatever their age. Only this package's files (bash-*.log, regular
// files) are considered; failures are ignored (a file another process
// removed first is gone all the same).
func (a *outputAcc) prune() {
	d, err := a.fsys.Open(a.dir)
	if err != nil {
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return
	}
	type output struct {
		path string
		size int64
		mod  time.Time
	}
	var olds []output
	files, total := 0, int64(0)
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, outputPrefix) || !strings.HasSuffix(name, outputSuffix) {
			continue
		}
		path := filepath.Join(a.root, a.dir, name)
		fi, err := a.fsys.Lstat(a.rel(path))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if _, writing := writingOutputs.Load(path); writing || path == a.path {
			files++
			total += fi.Size()
			continue
		}
		olds = append(olds, output{path: path, size: fi.Size(), mod: fi.ModTime()})
	}
	// Newest first.
	slices.SortFunc(olds, func(a, b output) int { return cmp.Or(b.mod.Compare(a.mod), strings.Compare(b.path, a.path)) })
	full := false
	for _, o := range olds {
		if !full && files+1 <= KeptOutputFiles && total+o.size <= KeptOutputBytes {
			files++
			total += o.size
			continue
		}
		full = true
		_ = a.fsys.Remove(a.rel(o.path))
	}
}
