package tools

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The full outputs' file names: outputPrefix, a random part, outputSuffix.
const (
	outputPrefix = "bash-"
	outputSuffix = ".log"
)

// pruneOutputs removes the oldest full outputs in dir until the newest
// fit in KeptOutputFiles files and KeptOutputBytes: from the newest down,
// the first that does not fit goes with every older one. keep (the one
// just written) and the outputs still being written stay whatever their
// age. Only this package's files (bash-*.log) are considered; failures
// are ignored (a file another process removed first is gone all the same).
func pruneOutputs(dir, keep string) {
	entries, err := os.ReadDir(dir)
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
		fi, err := e.Info()
		if err != nil {
			continue
		}
		path := filepath.Join(dir, name)
		if _, writing := writingOutputs.Load(path); writing || path == keep {
			files++
			total += fi.Size()
			continue
		}
		olds = append(olds, output{path: path, size: fi.Size(), mod: fi.ModTime()})
	}
	sort.Slice(olds, func(i, j int) bool {
		if !olds[i].mod.Equal(olds[j].mod) {
			return olds[i].mod.After(olds[j].mod)
		}
		return olds[i].path > olds[j].path
	})
	full := false
	for _, o := range olds {
		if !full && files+1 <= KeptOutputFiles && total+o.size <= KeptOutputBytes {
			files++
			total += o.size
			continue
		}
		full = true
		_ = os.Remove(o.path)
	}
}
