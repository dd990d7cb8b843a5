package agent

import (
	"io"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/conformance/v2walk"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/bash"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// TestV2SessionInMemory walks a session in the v2 dialect (v2walk.Walk:
// new, a prompt whose command asks permission and runs in a display
// terminal, a cancelled prompt, list, close, resumes from a cursor and
// from the start) with the agent over a real acp.Conn on pipes; each
// agent the walk starts is a new one on the same store.
func TestV2SessionInMemory(t *testing.T) {
	st, err := session.OpenStore(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	fs.Register(reg)
	bash.Register(reg)
	v2walk.Walk(t, t.TempDir(), func(t *testing.T) (io.WriteCloser, io.Reader) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		provider := script(t, v2walk.Model)
		conn := acp.NewConn(t.Context(), func(c acp.Client) acp.Agent {
			return New(c, Options{Registry: reg, Model: provider, Store: st})
		}, inR, outW, inR, nil)
		// The connection ends when its input does; then its output ends.
		go func() {
			conn.Wait()
			outW.Close()
		}()
		t.Cleanup(func() {
			inW.Close()
			conn.Close()
			conn.Wait()
		})
		return inW, outR
	})
}
