package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// credential is the user the server runs as; nil runs it as this process.
type credential struct{ uid, gid uint32 }

// unprivileged returns nil when this process is not root, else the
// "nobody" user (PostgreSQL refuses to run as root).
func unprivileged() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root and there is no user \"nobody\" to run PostgreSQL as: %v", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user nobody has a non-numeric uid %q or gid %q", u.Uid, u.Gid)
	}
	return &credential{uid: uint32(uid), gid: uint32(gid)}, nil
}

func (c *credential) chown(path string) error {
	if c == nil {
		return nil
	}
	return os.Chown(path, int(c.uid), int(c.gid))
}

// apply makes cmd run as the credential, and die with this process: a
// test binary killed by a timeout must not leave a server behind.
func (c *credential) apply(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if c != nil {
		attr.Credential = &syscall.Credential{Uid: c.uid, Gid: c.gid} // and no supplementary groups
	}
	cmd.SysProcAttr = attr
}
