//go:build !linux

package checkpoint

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
