// Command echo-server is benchrun's tiny TCP echo server, the target of tcp.echo scenarios
// in tests and in the e2e suite (image benchrun.local/echo:dev, built by hack/images/build.sh).
//
//	echo-server [-listen ADDR] [-stats ADDR] [-stats-file PATH]
//
// The listen address defaults to :$BENCHRUN_PORT_ECHO (set by `benchrun run` for a custom
// target's port named echo), else :7007. With -stats, GET http://ADDR/stats answers the
// counters as JSON ({"connections": N, "bytes": N}); they are also printed on exit
// (SIGTERM/SIGINT) and, with -stats-file, written there as JSON.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/benchrun/benchrun/internal/echo"
)

func main() {
	def := ":7007"
	if p := os.Getenv("BENCHRUN_PORT_ECHO"); p != "" {
		def = ":" + p
	}
	listen := flag.String("listen", def, "TCP address to echo on")
	stats := flag.String("stats", "", "HTTP address answering GET /stats with the counters (off when empty)")
	statsFile := flag.String("stats-file", "", "file the final counters are written to as JSON on exit")
	flag.Parse()
	srv, ln, stop, err := echo.Listen(*listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo-server:", err)
		os.Exit(1)
	}
	fmt.Printf("echo-server: listening on %s\n", ln.Addr())
	if *stats != "" {
		sl, err := net.Listen("tcp", *stats)
		if err != nil {
			fmt.Fprintln(os.Stderr, "echo-server:", err)
			os.Exit(1)
		}
		fmt.Printf("echo-server: stats on http://%s/stats\n", sl.Addr())
		mux := http.NewServeMux()
		mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(srv.Stats())
		})
		go func() { _ = http.Serve(sl, mux) }()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	st := stop()
	fmt.Printf("echo-server: %d connections, %d bytes echoed\n", st.Connections, st.Bytes)
	if *statsFile != "" {
		b, _ := json.Marshal(st)
		if err := os.WriteFile(*statsFile, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "echo-server:", err)
			os.Exit(1)
		}
	}
}
