//go:build !linux

package sandbox

// pidsRoot: cgroups are Linux only.
func pidsRoot() (string, string) { return "", "cgroups are Linux only" }

type pidsGroup struct{ dir string }

func newPidsGroup(string, int64) (*pidsGroup, error) { return &pidsGroup{}, nil }
func (g *pidsGroup) procs() string                   { return "" }
func (g *pidsGroup) refused() int64                  { return 0 }
func (g *pidsGroup) remove()                         {}

const (
	joinScript     = ""
	bwrapProcesses = 2
	bridgeTasks    = 16
)
