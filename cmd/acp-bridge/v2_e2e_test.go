package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/acp-bridge/acp-bridge/conformance/v2walk"
)

// TestBinaryV2 walks a session in the ACP v2 dialect (v2walk.Walk: new, a
// prompt whose command asks permission and shows in a display terminal, a
// cancelled prompt, list, close, then resumes from the replay cursor and
// from the start) with the real binary over stdio; each agent the walk
// starts is a new process on the same state directory. Every message is
// checked against the draft's schema (skipped without it).
func TestBinaryV2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	model := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(model, []byte(v2walk.Model), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"ACP_BRIDGE_STATE_DIR=" + t.TempDir()}
	v2walk.Walk(t, t.TempDir(), func(t *testing.T) (io.WriteCloser, io.Reader) {
		stdin, stdout, _ := startBinaryPipes(t, env, "--model", "script:"+model)
		return stdin, stdout
	})
}
