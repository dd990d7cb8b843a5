package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// sandboxConfig is the sandbox part of the config file (sandbox.mode is
// also --sandbox and ACP_BRIDGE_SANDBOX).
type sandboxConfig struct {
	Mode     string `yaml:"mode"`
	Network  bool   `yaml:"network"`
	Escalate bool   `yaml:"escalate"`
	// Writable are more directories workspace-write commands may write
	// under; ~/ is the home directory. One that does not exist is left out.
	Writable []string `yaml:"writable"`
}

func (s *sandboxConfig) setMode(v, from string) error {
	m, err := sandbox.ParseMode(v)
	if err != nil {
		return fmt.Errorf("%s: %v", from, err)
	}
	s.Mode = string(m)
	return nil
}

// mode is the configured mode; workspace-write unless the user chose.
func (s sandboxConfig) mode() sandbox.Mode {
	if s.Mode == "" {
		return sandbox.WorkspaceWrite
	}
	return sandbox.Mode(s.Mode)
}

// probeEnv is a hidden switch for the tests that drive the real binary:
// ACP_BRIDGE_SANDBOX_PROBE=none makes it behave as on a kernel without
// Landlock (sandbox.Probe), so what it then says can be checked.
const probeEnv = "ACP_BRIDGE_SANDBOX_PROBE"

func init() {
	sandbox.HasHelper = true // runCommand serves it
	if os.Getenv(probeEnv) == "none" {
		sandbox.Probe = func() sandbox.Support {
			return sandbox.Support{Reason: "simulated for a test (" + probeEnv + "=none): no Landlock"}
		}
	}
}

// agentSandbox is the agent's sandbox: the mode and network the user
// chose, what this platform offers, and the private temp dir inside dir
// (the process's spill directory, removed at exit and swept after a
// crash).
func agentSandbox(cfg *config, dir string) (*agent.Sandbox, error) {
	sb := &agent.Sandbox{Mode: cfg.sandbox.mode(), Network: cfg.sandbox.Network, Escalate: cfg.sandbox.Escalate, Support: sandbox.Probe()}
	home, _ := os.UserHomeDir()
	for _, w := range cfg.sandbox.Writable {
		if rest, ok := strings.CutPrefix(w, "~/"); ok && home != "" {
			w = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("sandbox.writable: %q is not an absolute path (or ~/…)", w)
		}
		if real, err := filepath.EvalSymlinks(w); err == nil {
			sb.Writable = append(sb.Writable, real)
		}
	}
	if dir == "" {
		return sb, nil
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("the sandbox's private temp dir: %w", err)
	}
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	sb.TempDir = tmp
	return sb, nil
}

// startNote is what the bridge says on stderr (the editor's log) at start
// about the sandbox, when there is something to say: it is off, or it
// cannot be had here.
func startNote(sb *agent.Sandbox) string {
	switch {
	case sb.Mode == sandbox.Off:
		return "acp-bridge: sandbox off: the commands the agent runs are not confined (they can change any file you can and reach the network)\n"
	case !sb.Support.Available:
		return fmt.Sprintf("acp-bridge: sandbox %s is not available here: %s; commands will not run unless you choose --sandbox off\n", sb.Mode, sb.Support.Reason)
	}
	return ""
}

// sandboxCheck is doctor's line about the sandbox: the mode, the
// mechanism, and a proof that it holds (a confined command cannot write
// outside its roots), not only that the kernel says it could.
func sandboxCheck(ctx context.Context, cfg *config) check {
	mode := cfg.sandbox.mode()
	s := sandbox.Probe()
	net := "no network"
	if cfg.sandbox.Network {
		net = "network allowed"
	}
	switch {
	case mode == sandbox.Off:
		return check{name: "sandbox", ok: true, msg: "off: commands run unconfined (available here: " + availability(s) + ")"}
	case !s.Available:
		return check{name: "sandbox", msg: fmt.Sprintf("%s is not available: %s", mode, s.Reason),
			fix: "run on a kernel with Landlock (5.13 or newer, lsm=landlock), or choose --sandbox off (sandbox.mode: off) to run commands unconfined"}
	}
	if err := proveSandbox(ctx); err != nil {
		return check{name: "sandbox", msg: fmt.Sprintf("%s with %s does not hold: %v", mode, s.Mechanism, err),
			fix: "report it; meanwhile --sandbox off runs commands unconfined"}
	}
	return check{name: "sandbox", ok: true, msg: fmt.Sprintf("%s (%s; %s) holds: a confined write outside the roots was refused. %s", mode, s.Mechanism, net, s.NetworkNote)}
}

func availability(s sandbox.Support) string {
	if s.Available {
		return s.Mechanism
	}
	return "none, " + s.Reason
}

// proveSandbox runs a command confined to a scratch root that tries to
// write beside it: the write must fail and the file must not exist.
func proveSandbox(ctx context.Context) error {
	base, err := os.MkdirTemp("", "acp-bridge-doctor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	root, tmp := filepath.Join(base, "root"), filepath.Join(base, "tmp")
	for _, d := range []string{root, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	outside := filepath.Join(base, "outside")
	sh, err := exec.LookPath("sh")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, sh, "-c", `: > "$1" && : > "$2"`, "sh", filepath.Join(root, "inside"), outside)
	cmd.Dir = root
	if err := sandbox.Wrap(cmd, &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{root}, TempDir: tmp}); err != nil {
		return err
	}
	out, err := cmd.CombinedOutput()
	if _, serr := os.Stat(filepath.Join(root, "inside")); serr != nil {
		return fmt.Errorf("a write inside the roots failed: %s", firstLine(string(out)))
	}
	if _, serr := os.Stat(outside); !errors.Is(serr, os.ErrNotExist) || err == nil {
		return errors.New("a write outside the roots was not refused")
	}
	return nil
}
