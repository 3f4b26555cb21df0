package progress

import (
	"strings"
	"testing"
)

// TestRemoteWriteInDocument: a document's remote-write counts decode when honest and are
// refused when negative, absurd, multi-line or over 256 bytes; failures sum over runners.
func TestRemoteWriteInDocument(t *testing.T) {
	ok := `{"scenarios":[],"remoteWrite":{"sent":3,"failed":2,"lastError":"HTTP 503 Service Unavailable"}}`
	d, err := Decode(ok)
	if err != nil || d.RemoteWrite == nil || d.RemoteWrite.Failed != 2 {
		t.Fatalf("honest document: %+v %v", d, err)
	}
	for _, bad := range []string{
		`{"scenarios":[],"remoteWrite":{"sent":-1,"failed":0}}`,
		`{"scenarios":[],"remoteWrite":{"sent":0,"failed":9000000000000000000}}`,
		`{"scenarios":[],"remoteWrite":{"sent":0,"failed":1,"lastError":"a\nb"}}`,
		`{"scenarios":[],"remoteWrite":{"sent":0,"failed":1,"lastError":"` + strings.Repeat("x", 257) + `"}}`,
	} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("accepted %.80s", bad)
		}
	}
	var f RemoteWriteFailures
	f.AddRemoteWrite(d)
	f.AddRemoteWrite(Doc{RemoteWrite: &RemoteWrite{Sent: 5}})
	f.AddRemoteWrite(Doc{})
	f.AddRemoteWrite(Doc{RemoteWrite: &RemoteWrite{Failed: 4, LastError: "refused"}})
	if f.Failed != 6 || f.Runners != 2 || f.LastError != "refused" {
		t.Errorf("failures: %+v", f)
	}
}
