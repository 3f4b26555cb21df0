package local

import "syscall"

// sysProcAttr puts a child in its own process group and kills it when benchrun dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
