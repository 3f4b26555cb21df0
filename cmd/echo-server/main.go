// Command echo-server is benchrun's tiny TCP echo server, the target of tcp.echo (and http)
// scenarios in tests, `make bench` and the e2e suite (image benchrun.local/echo:dev, built by
// hack/images/build.sh).
//
//	echo-server [-listen ADDR] [-http ADDR] [-grpc ADDR] [-stats-file PATH]
//
// The listen address defaults to :$BENCHRUN_PORT_ECHO (set for a custom target's port named
// echo), else :7007. With -http, an HTTP/1.1 and h2c server on ADDR answers every request
// with 200 "ok" (counted) and GET /stats with the counters as JSON ({"connections", "bytes",
// "httpRequests", "httpBodyBytes", "grpcCalls", "grpcBytes"}); they are also printed on exit
// (SIGTERM/SIGINT) and, with -stats-file, written there as JSON. With -grpc, a cleartext
// gRPC server on ADDR serves benchrun.echo.v1.Echo/Echo (internal/echo/grpc.go; counted) and
// server reflection; -grpc defaults to :$BENCHRUN_PORT_GRPC when a custom target has a port
// named grpc.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
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
	httpAddr := flag.String("http", "", "HTTP address: 200 to every request, GET /stats the counters (off when empty)")
	grpcAddr := flag.String("grpc", grpcDefault(), "gRPC address: the Echo service and server reflection (off when empty)")
	statsFile := flag.String("stats-file", "", "file the final counters are written to as JSON on exit")
	flag.Parse()
	srv, ln, stop, err := echo.Listen(*listen)
	if err != nil {
		fail(err)
	}
	fmt.Printf("echo-server: listening on %s\n", ln.Addr())
	if *httpAddr != "" {
		hl, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			fail(err)
		}
		fmt.Printf("echo-server: HTTP on %s (counters: /stats)\n", hl.Addr())
		go func() { _ = srv.HTTPServer().Serve(hl) }()
	}
	if *grpcAddr != "" {
		serveGRPC(srv, *grpcAddr)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	st := stop()
	fmt.Printf("echo-server: %d connections, %d bytes echoed, %d HTTP requests, %d gRPC calls\n", st.Connections, st.Bytes, st.HTTPRequests, st.GRPCCalls)
	if *statsFile != "" {
		b, _ := json.Marshal(st)
		if err := os.WriteFile(*statsFile, b, 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "echo-server:", err)
	os.Exit(1)
}

// grpcDefault is the default -grpc address: :$BENCHRUN_PORT_GRPC when set, else off.
func grpcDefault() string {
	if p := os.Getenv("BENCHRUN_PORT_GRPC"); p != "" {
		return ":" + p
	}
	return ""
}

// serveGRPC starts the gRPC Echo service on addr in the background.
func serveGRPC(srv *echo.Server, addr string) {
	gl, err := net.Listen("tcp", addr)
	if err != nil {
		fail(err)
	}
	gs, err := srv.GRPCServer()
	if err != nil {
		fail(err)
	}
	fmt.Printf("echo-server: gRPC on %s (%s, reflection)\n", gl.Addr(), echo.GRPCEchoMethod)
	go func() { _ = gs.Serve(gl) }()
}
