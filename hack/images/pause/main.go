//go:build linux

// Command pause is the pod sandbox process of the local cluster's own pause image
// (benchrun.local/pause:3.10, containerd's sandbox_image): it sleeps, reaps zombies and
// exits 0 on SIGINT or SIGTERM. Built by hack/images/build.sh; nothing can be pulled here.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
