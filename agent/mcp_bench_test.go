package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
)

// nopClient is an editor that hears nothing and answers nothing.
type nopClient struct{}

func (nopClient) SessionUpdate(context.Context, string, acp.Update) error { return nil }
func (nopClient) RequestPermission(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return nil, errors.New("no editor")
}
func (nopClient) ReadTextFile(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	return nil, errors.New("no editor")
}
func (nopClient) WriteTextFile(context.Context, *acp.WriteTextFileRequest) error {
	return errors.New("no editor")
}

// BenchmarkNewSessionWithStdioMCP measures session/new plus session/close
// with n stdio servers (each the test binary, started, initialized, listed,
// stopped). Servers start and stop in parallel, so n=4 should cost about
// what n=1 does, not four times as much.
func BenchmarkNewSessionWithStdioMCP(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			ag := New(nopClient{}, Options{})
			defer ag.Shutdown()
			var servers []acp.McpServer
			for i := range n {
				s := acp.McpServer{Name: fmt.Sprintf("s%d", i), Command: os.Args[0], Args: []string{}}
				for _, kv := range mcptest.Env(mcptest.ModeStdio, filepath.Join(b.TempDir(), "pids")) {
					k, v, _ := strings.Cut(kv, "=")
					s.Env = append(s.Env, acp.EnvVariable{Name: k, Value: v})
				}
				servers = append(servers, s)
			}
			cwd := b.TempDir()
			b.ReportAllocs()
			var newNS int64
			for b.Loop() {
				start := time.Now()
				s, err := ag.NewSession(b.Context(), &acp.NewSessionRequest{Cwd: cwd, McpServers: servers})
				if err != nil {
					b.Fatal(err)
				}
				newNS += time.Since(start).Nanoseconds()
				sess, err := ag.session(s.SessionID)
				if err != nil {
					b.Fatal(err)
				}
				if got := len(sess.scope.Visible()); got != 8*n {
					b.Fatalf("%d tools, want %d", got, 8*n)
				}
				if _, err := ag.CloseSession(b.Context(), &acp.CloseSessionRequest{SessionID: s.SessionID}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(newNS)/float64(b.N)/1e6, "new-ms/op")
		})
	}
}
