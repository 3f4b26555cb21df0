package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/benchrun/benchrun/internal/pause"
)

// pauseContainer stops the processes of one container of its pod for --for, then continues
// them (also on SIGTERM), and writes what it did to its termination message.
func pauseContainer(args []string) {
	fs := flag.NewFlagSet("pause", flag.ExitOnError)
	id := fs.String("container-id", "", "the runtime ID of the container to pause (pod status containerID without its scheme)")
	d := fs.Duration("for", 0, "how long to pause it (100ms to 10m)")
	proc := fs.String("proc", "/proc", "the proc file system of the pod's shared process namespace")
	msgFile := fs.String("termination-log", "/dev/termination-log", "where the report goes")
	_ = fs.Parse(args)
	if *id == "" || *d < 100*time.Millisecond || *d > 10*time.Minute {
		fmt.Fprintln(os.Stderr, "benchrun-runner pause: --container-id and --for (100ms to 10m) are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	rep, err := pause.Run(ctx, *proc, *id, *d, pause.Kill)
	msg := rep.Message()
	if err != nil {
		msg = "error: " + err.Error()
	}
	_ = os.WriteFile(*msgFile, []byte(msg), 0o644)
	fmt.Fprintln(os.Stderr, "benchrun-runner pause:", msg)
	if err != nil {
		os.Exit(1)
	}
}
