//go:build !linux

package checkpoint

import (
	"errors"
	"io/fs"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

// Without stamps every Take takes git's walk.
func stampOf(fs.FileInfo) (stamp, bool) { return stamp{}, false }

func stamper(string) (func(string) (stamp, error), func(), error) {
	return nil, nil, errors.ErrUnsupported
}
