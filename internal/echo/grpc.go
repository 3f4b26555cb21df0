package echo

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The gRPC Echo service, described in Go (no protoc in the build):
//
//	syntax = "proto3";
//	package benchrun.echo.v1;
//	message EchoRequest { bytes payload = 1; string text = 2; int32 code = 3; }
//	message EchoReply { bytes payload = 1; string text = 2; }
//	service Echo { rpc Echo(EchoRequest) returns (EchoReply); }
//
// Echo answers with the request's payload and text; a non-zero code makes it fail with that
// gRPC status code instead (for tests of the status-code table). The service registers the
// server reflection service too, so clients (grpcurl, benchrun's grpc scenarios) need no proto.
const (
	// GRPCService is the Echo service's full name.
	GRPCService = "benchrun.echo.v1.Echo"
	// GRPCEchoMethod is the full method name of Echo (package.Service/Method).
	GRPCEchoMethod = GRPCService + "/Echo"
	grpcProtoFile  = "benchrun/echo/v1/echo.proto"
)

var (
	grpcFileOnce sync.Once
	grpcFile     protoreflect.FileDescriptor
	grpcFileErr  error
)

// GRPCFile returns the descriptor of the Echo service's proto file, registered in
// protoregistry.GlobalFiles (where the reflection service looks) on first use.
func GRPCFile() (protoreflect.FileDescriptor, error) {
	grpcFileOnce.Do(func() {
		grpcFile, grpcFileErr = protodesc.NewFile(echoFileProto(), protoregistry.GlobalFiles)
		if grpcFileErr == nil {
			if _, err := protoregistry.GlobalFiles.FindFileByPath(grpcProtoFile); err != nil {
				grpcFileErr = protoregistry.GlobalFiles.RegisterFile(grpcFile)
			}
		}
	})
	return grpcFile, grpcFileErr
}

// echoFileProto is the FileDescriptorProto of echo.proto.
func echoFileProto() *descriptorpb.FileDescriptorProto {
	field := func(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: &name, Number: &n, Type: typ.Enum(), JsonName: &name,
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
	}
	s := func(v string) *string { return &v }
	bytesT, stringT, int32T := descriptorpb.FieldDescriptorProto_TYPE_BYTES, descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_INT32
	return &descriptorpb.FileDescriptorProto{
		Name: s(grpcProtoFile), Package: s("benchrun.echo.v1"), Syntax: s("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: s("EchoRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				field("payload", 1, bytesT), field("text", 2, stringT), field("code", 3, int32T)}},
			{Name: s("EchoReply"), Field: []*descriptorpb.FieldDescriptorProto{
				field("payload", 1, bytesT), field("text", 2, stringT)}},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: s("Echo"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: s("Echo"), InputType: s(".benchrun.echo.v1.EchoRequest"), OutputType: s(".benchrun.echo.v1.EchoReply")},
		}}},
	}
}

// GRPCServer returns a gRPC server (cleartext unless opts add credentials) serving the Echo
// service, counted in s's Stats (GRPCCalls, GRPCBytes), and server reflection.
func (s *Server) GRPCServer(opts ...grpc.ServerOption) (*grpc.Server, error) {
	fd, err := GRPCFile()
	if err != nil {
		return nil, fmt.Errorf("echo: the Echo proto: %w", err)
	}
	req, reply := fd.Messages().ByName("EchoRequest"), fd.Messages().ByName("EchoReply")
	gs := grpc.NewServer(opts...)
	gs.RegisterService(&grpc.ServiceDesc{
		ServiceName: GRPCService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Echo", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(req)
			if err := dec(in); err != nil {
				return nil, err
			}
			return s.grpcEcho(in, reply)
		}}},
		Metadata: grpcProtoFile,
	}, struct{}{})
	reflection.Register(gs)
	return gs, nil
}

// grpcEcho answers one Echo call: counted, then the payload and text back, or the requested
// status code.
func (s *Server) grpcEcho(in *dynamicpb.Message, reply protoreflect.MessageDescriptor) (any, error) {
	f := in.Descriptor().Fields()
	payload := in.Get(f.ByName("payload")).Bytes()
	s.grpcCalls.Add(1)
	s.grpcBytes.Add(int64(len(payload)))
	if code := in.Get(f.ByName("code")).Int(); code != 0 {
		return nil, status.Errorf(codes.Code(code), "echo: status %d requested", code)
	}
	out := dynamicpb.NewMessage(reply)
	rf := reply.Fields()
	if len(payload) > 0 {
		out.Set(rf.ByName("payload"), protoreflect.ValueOfBytes(payload))
	}
	if t := in.Get(f.ByName("text")).String(); t != "" {
		out.Set(rf.ByName("text"), protoreflect.ValueOfString(t))
	}
	return out, nil
}
