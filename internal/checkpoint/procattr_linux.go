package checkpoint

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// procAttr kills a git the worker started when the worker dies, so a git
// left running can never race the next Take that finds its lock stale.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// stampOf is a walked path's stamp.
func stampOf(fi fs.FileInfo) (stamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{}, false
	}
	return stamp{st.Size, st.Mtim.Nano(), st.Ctim.Nano(), st.Ino, st.Mode}, true
}

// stamper stamps paths relative to workspace (from its directory, the
// shortest lookup), never following their last component.
func stamper(workspace string) (func(string) (stamp, error), func(), error) {
	dir, err := unix.Open(workspace, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return func(rel string) (stamp, error) {
		var st unix.Stat_t
		err := unix.Fstatat(dir, rel, &st, unix.AT_SYMLINK_NOFOLLOW)
		return stamp{st.Size, st.Mtim.Nano(), st.Ctim.Nano(), st.Ino, st.Mode}, err
	}, func() { unix.Close(dir) }, err
}
