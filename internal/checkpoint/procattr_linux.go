package checkpoint

import (
	"io/fs"
	"syscall"
)

// procAttr kills a git the worker started when the worker dies, so a git
// left running can never race the next Take that finds its lock stale.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// change is a file's ctime and inode: what an edit keeping size and mtime changes.
func change(fi fs.FileInfo) (int64, uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Ctim.Nano(), st.Ino, true
}
