package echo

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The gRPC Echo service over real loopback HTTP/2: payload and text come back, a requested
// code fails the call with it, calls and payload bytes are counted, and the reflection
// service lists the Echo service.
func TestGRPCEcho(t *testing.T) {
	s := &Server{}
	gs, err := s.GRPCServer()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	fd, _ := GRPCFile()
	reqD, replyD := fd.Messages().ByName("EchoRequest"), fd.Messages().ByName("EchoReply")
	call := func(payload string, code int32) (*dynamicpb.Message, error) {
		in, out := dynamicpb.NewMessage(reqD), dynamicpb.NewMessage(replyD)
		in.Set(reqD.Fields().ByName("payload"), protoreflect.ValueOfBytes([]byte(payload)))
		in.Set(reqD.Fields().ByName("text"), protoreflect.ValueOfString("t"))
		in.Set(reqD.Fields().ByName("code"), protoreflect.ValueOfInt32(code))
		return out, conn.Invoke(context.Background(), "/"+GRPCEchoMethod, in, out)
	}
	out, err := call("hello", 0)
	if err != nil || string(out.Get(replyD.Fields().ByName("payload")).Bytes()) != "hello" || out.Get(replyD.Fields().ByName("text")).String() != "t" {
		t.Fatalf("echo: %v %v", out, err)
	}
	if _, err := call("abc", int32(codes.NotFound)); status.Code(err) != codes.NotFound {
		t.Errorf("code 5: %v", err)
	}
	if st := s.Stats(); st.GRPCCalls != 2 || st.GRPCBytes != 8 {
		t.Errorf("stats %+v", st)
	}
	rs, err := refv1.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Send(&refv1.ServerReflectionRequest{MessageRequest: &refv1.ServerReflectionRequest_ListServices{ListServices: "*"}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rs.Recv()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sv := range resp.GetListServicesResponse().GetService() {
		found = found || sv.GetName() == GRPCService
	}
	if !found {
		t.Errorf("reflection lists %v", resp.GetListServicesResponse().GetService())
	}
}
