package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A platform without a sandbox (simulated through Probe, the seam the
// binary's ACP_BRIDGE_SANDBOX_PROBE uses too): Wrap refuses every policy
// that confines, saying why, and leaves the command as it was, so nothing
// it returns would run; a policy that confines nothing (mode off, no mode,
// no policy) is no refusal, and its command runs exactly as given.
func TestUnavailableRefuses(t *testing.T) {
	defer func(p func() Support) { Probe = p }(Probe)
	Probe = func() Support { return Support{Reason: "simulated: no Landlock"} }
	// The test binary itself, running no test: a command every platform has.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		p      *Policy
		refuse bool
	}{
		{"workspace-write", &Policy{Mode: WorkspaceWrite, Roots: []string{t.TempDir()}, TempDir: t.TempDir()}, true},
		{"read-only", &Policy{Mode: ReadOnly, TempDir: t.TempDir()}, true},
		{"network allowed", &Policy{Mode: WorkspaceWrite, Network: true}, true},
		{"off", &Policy{Mode: Off, Roots: []string{t.TempDir()}, TempDir: t.TempDir()}, false},
		{"no mode", &Policy{}, false},
		{"no policy", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(self, "-test.run=^$")
			path, args := cmd.Path, slices.Clone(cmd.Args)
			err := Wrap(cmd, tc.p)
			if cmd.Path != path || !slices.Equal(cmd.Args, args) || cmd.Env != nil {
				t.Errorf("Wrap rewrote the command: %s %q, env %q", cmd.Path, cmd.Args, cmd.Env)
			}
			if tc.refuse {
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "simulated: no Landlock") {
					t.Fatalf("Wrap = %v, want ErrUnavailable with the reason", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Wrap = %v, want the command as it is", err)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("the command as it is did not run: %v: %s", err, out)
			}
		})
	}
}
