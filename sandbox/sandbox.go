// Package sandbox confines the commands the agent runs (the bash tool,
// background jobs, hooks, stdio MCP servers) with the kernel rather than
// with rules about their text: on Linux, Landlock for the filesystem and
// TCP plus a seccomp filter for the sockets Landlock cannot see, applied by
// a helper mode of the bridge's own binary that confines itself and then
// execs the command (so the bridge stays unconfined and the command keeps
// the helper's pid and process group); on macOS, sandbox-exec with a
// profile of the same meaning. Elsewhere it says it is not available, and
// a command runs unconfined only when the user chose mode off.
//
// It knows nothing of sessions or settings: the caller gives a Policy
// (the mode, the writable roots, the private temp dir) and an *exec.Cmd
// not yet started.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Mode is how far a command is confined.
type Mode string

const (
	// WorkspaceWrite reads anywhere, writes only under the roots and the
	// private temp dir; no network unless Policy.Network.
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly writes nothing but the private temp dir; no network
	// unless Policy.Network.
	ReadOnly Mode = "read-only"
	// Off runs commands as they are.
	Off Mode = "off"
)

// Modes are the modes in the order a picker offers them, tightest last.
var Modes = []Mode{WorkspaceWrite, ReadOnly, Off}

// ParseMode reads a mode as a user writes it.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Modes, m) {
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q (workspace-write, read-only or off)", s)
}

// Rank orders modes by how much they confine: off 0, workspace-write 1,
// read-only 2. A project's settings may only raise it.
func (m Mode) Rank() int {
	switch m {
	case WorkspaceWrite:
		return 1
	case ReadOnly:
		return 2
	}
	return 0
}

// Policy is what one command may do.
type Policy struct {
	Mode Mode
	// Network allows network access (TCP and every other socket).
	Network bool
	// Roots are the directories a workspace-write command may write under
	// (the session's cwd and additional directories).
	Roots []string
	// TempDir is the private temp dir, writable in every confined mode; it
	// must exist. The command's TMPDIR, TMP and TEMP point to it.
	TempDir string
}

// Confined reports whether p confines anything.
func (p *Policy) Confined() bool { return p != nil && p.Mode != Off && p.Mode != "" }

// Writable is every directory a command under p may write under.
func (p *Policy) Writable() []string {
	var out []string
	if p.Mode == WorkspaceWrite {
		out = append(out, p.Roots...)
	}
	if p.TempDir != "" {
		out = append(out, p.TempDir)
	}
	return out
}

// Describe says in a few words what p lets a command do, for the editor.
func (p *Policy) Describe() string {
	if !p.Confined() {
		return "not sandboxed"
	}
	w := "writes only under the workspace and a private temp dir"
	if p.Mode == ReadOnly {
		w = "writes only to a private temp dir"
	}
	n := "no network"
	if p.Network {
		n = "network allowed"
	}
	return fmt.Sprintf("sandbox %s: %s, %s", p.Mode, w, n)
}

// Support is what this platform offers.
type Support struct {
	// Available: commands can be confined.
	Available bool
	// Mechanism names what confines them ("Landlock ABI 7 + seccomp").
	Mechanism string
	// Reason says why not, when not available, in the user's terms.
	Reason string
	// NetworkNote says what "no network" cannot stop on this platform.
	NetworkNote string
}

// Failure codes of a confined command's tool call.
const (
	// CodeRefused: the command failed, and its output says the sandbox
	// refused something (Refusal). The agent may offer to run it outside.
	CodeRefused = "SANDBOX_REFUSED"
	// CodeUnavailable: a confined mode was asked for where there is no
	// sandbox; the command did not run.
	CodeUnavailable = "SANDBOX_UNAVAILABLE"
)

// ErrUnavailable is returned by Wrap when a confined policy is asked for
// on a platform that cannot confine: the command is not run.
var ErrUnavailable = errors.New("the sandbox is not available here")

// Probe reports what this platform offers. It is a variable so a test (and
// the binary's hidden test switch, cmd/acp-bridge) can simulate a kernel
// without Landlock.
var Probe = probe

// HasHelper says that this program serves the helper mode (its main
// calls HelperMain for HelperArg): on Linux, Wrap starts this very binary
// as the helper, and a program without the mode (a test binary) would run
// itself instead, so Wrap refuses there. Set it before any command starts.
var HasHelper bool

// HelperArg is the first argument of the binary's helper mode
// (`acp-bridge sandbox-exec --mode ... -- cmd args`).
const HelperArg = "sandbox-exec"

// Wrap rewrites cmd, not yet started, to run under p: through the
// binary's helper mode on Linux, sandbox-exec on macOS. A policy that
// confines nothing leaves cmd as it is. On a platform without a sandbox it
// returns ErrUnavailable (wrapped with the reason) and cmd must not run.
// cmd's process group and the watchdogs set on it still apply: the helper
// execs the command in its own process.
func Wrap(cmd *exec.Cmd, p *Policy) error {
	if !p.Confined() || cmd.Err != nil {
		return nil
	}
	if s := Probe(); !s.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, s.Reason)
	}
	if p.TempDir != "" {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "TMPDIR="+p.TempDir, "TMP="+p.TempDir, "TEMP="+p.TempDir)
	}
	return wrap(cmd, p)
}

// target is the program cmd runs and its argv (the program alone when
// cmd.Args is empty, as exec.Cmd takes it): what wrap hands to the helper
// or sandbox-exec. Both build new slices from argv, so it is not copied.
func target(cmd *exec.Cmd) (path string, argv []string) {
	if len(cmd.Args) == 0 {
		return cmd.Path, []string{cmd.Path}
	}
	return cmd.Path, cmd.Args
}

// HelperArgs is the helper mode's arguments for p and a command (its
// resolved path, then its argv): what Wrap starts on Linux.
func HelperArgs(p *Policy, path string, argv []string) []string {
	a := []string{HelperArg, "--mode", string(p.Mode)}
	if p.Network {
		a = append(a, "--network")
	}
	if p.Mode == WorkspaceWrite {
		for _, r := range p.Roots {
			a = append(a, "--root", r)
		}
	}
	if p.TempDir != "" {
		a = append(a, "--tmp", p.TempDir)
	}
	a = append(a, "--", path)
	return append(a, argv...)
}

// parseHelperArgs reads what HelperArgs wrote (without HelperArg).
func parseHelperArgs(args []string) (p Policy, path string, argv []string, err error) {
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		switch a {
		case "--":
			if len(args) < 2 {
				return p, "", nil, errors.New("no command after --")
			}
			if !p.Confined() {
				return p, "", nil, errors.New("no --mode that confines (workspace-write or read-only)")
			}
			return p, args[0], args[1:], nil
		case "--network":
			p.Network = true
		case "--mode", "--root", "--tmp":
			if len(args) == 0 {
				return p, "", nil, fmt.Errorf("%s needs a value", a)
			}
			v := args[0]
			args = args[1:]
			switch a {
			case "--mode":
				m, err := ParseMode(v)
				if err != nil {
					return p, "", nil, err
				}
				p.Mode = m
			case "--root":
				p.Roots = append(p.Roots, v)
			case "--tmp":
				p.TempDir = v
			}
		default:
			return p, "", nil, fmt.Errorf("unknown argument %q", a)
		}
	}
	return p, "", nil, errors.New("no -- and command")
}

// HelperMain is the binary's helper mode: args are what follows HelperArg.
// It confines the process and execs the command; it returns only on
// failure, with the exit status to use (126, as a shell does for a command
// it cannot run) after saying why on stderr. It never runs the command
// unconfined.
func HelperMain(args []string) int {
	p, path, argv, err := parseHelperArgs(args)
	if err == nil {
		err = confineAndExec(&p, path, argv)
	}
	fmt.Fprintf(os.Stderr, "acp-bridge sandbox: %v\n", err)
	return 126
}
