//go:build !linux

package pgtest

import (
	"errors"
	"os"
	"os/exec"
)

type credential struct{}

func unprivileged() (*credential, error) {
	if os.Geteuid() == 0 {
		return nil, errors.New("running as root, and this helper drops privileges only on Linux")
	}
	return nil, nil
}

func (c *credential) chown(string) error { return nil }

func (c *credential) apply(*exec.Cmd) {}
