//go:build !linux

package local

import "syscall"

// sysProcAttr puts a child in its own process group (no parent-death signal off Linux:
// children are stopped by Stop, on Ctrl-C and on failure, not when benchrun is killed).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
