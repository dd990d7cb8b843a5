//go:build unix

package bash

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// Where the platform cannot confine (simulated through sandbox.Probe), a
// command under a policy that confines is not run at all, in the
// foreground or in the background, and the call says why and what to do;
// under mode off it runs as it is.
func TestUnconfinableCommandsDoNotRun(t *testing.T) {
	defer func(p func() sandbox.Support) { sandbox.Probe = p }(sandbox.Probe)
	sandbox.Probe = func() sandbox.Support { return sandbox.Support{Reason: "simulated: no Landlock"} }
	d, err := registry.Define(Tool(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode       sandbox.Mode
		background bool
	}{
		{sandbox.WorkspaceWrite, false}, {sandbox.WorkspaceWrite, true}, {sandbox.ReadOnly, false}, {sandbox.Off, false}, {sandbox.Off, true},
	} {
		name := string(tc.mode)
		if tc.background {
			name += " background"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			tb := jobs.New(nil)
			defer tb.Close()
			raw, _ := json.Marshal(Args{Command: "echo ran > ran", RunInBackground: tc.background})
			ctx := sandbox.WithPolicy(context.Background(), &sandbox.Policy{Mode: tc.mode, Roots: []string{dir}, TempDir: t.TempDir()})
			r, err := d.Run(ctx, &registry.Call{ID: "c1", Name: "bash", Args: raw, Cwd: dir, Roots: []string{dir}, Jobs: tb})
			ran := filepath.Join(dir, "ran")
			if tc.mode != sandbox.Off {
				var te *registry.Error
				if !errors.As(err, &te) || te.Code != sandbox.CodeUnavailable {
					t.Fatalf("the call = %v, %v; want %s", r.Text(), err, sandbox.CodeUnavailable)
				}
				if _, err := os.Stat(ran); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the command ran (%v)", err)
				}
				if len(tb.List()) != 0 {
					t.Errorf("a job was started: %v", tb.List())
				}
				return
			}
			if err != nil || r.IsError {
				t.Fatalf("mode off: %v %s", err, r.Text())
			}
			if tc.background {
				for deadline := time.Now().Add(30 * time.Second); tb.List()[0].Running; time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the job never ended")
					}
				}
			}
			if b, err := os.ReadFile(ran); err != nil || string(b) != "ran\n" {
				t.Errorf("mode off: %q, %v", b, err)
			}
		})
	}
}
