package sysprompt

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Env is what the model is told about where it runs. It is taken once, when
// the session starts, and never refreshed: a changing block would break the
// prompt cache of every request after it.
type Env struct {
	OS, Arch string
	Shell    string   // how commands run
	Date     string   // YYYY-MM-DD, the session's start
	Roots    []string // workspace roots, the first is the cwd
	Git      *Git     // nil: the workspace is not in a git repository
}

// Git describes the repository the first root is in.
type Git struct {
	Root   string
	Branch string // "" when HEAD is detached or unknown
	// Dirty: uncommitted changes (tracked or untracked) at session start.
	// Unknown when git could not be asked.
	Dirty, DirtyUnknown bool
}

// Render is the environment section of the system prompt.
func (e Env) Render() string {
	var b strings.Builder
	b.WriteString("# Environment\n\nTaken when this session started; it is not updated as the session goes on.\n")
	if e.OS != "" {
		fmt.Fprintf(&b, "\n- Platform: %s/%s", e.OS, e.Arch)
	}
	if e.Shell != "" {
		fmt.Fprintf(&b, "\n- Shell: %s", e.Shell)
	}
	if e.Date != "" {
		fmt.Fprintf(&b, "\n- Date: %s", e.Date)
	}
	for i, r := range e.Roots {
		if i == 0 {
			fmt.Fprintf(&b, "\n- Workspace root (the working directory): %s", r)
		} else {
			fmt.Fprintf(&b, "\n- Additional workspace root: %s", r)
		}
	}
	switch g := e.Git; {
	case g == nil:
		b.WriteString("\n- Git: not a git repository")
	default:
		fmt.Fprintf(&b, "\n- Git: repository at %s", g.Root)
		if g.Branch != "" {
			fmt.Fprintf(&b, ", branch `%s`", g.Branch)
		} else {
			b.WriteString(", detached HEAD")
		}
		switch {
		case g.DirtyUnknown:
			b.WriteString(", uncommitted changes unknown")
		case g.Dirty:
			b.WriteString(", with uncommitted changes")
		default:
			b.WriteString(", no uncommitted changes")
		}
	}
	return b.String()
}

// DetectOptions tune Detect; zero values take the defaults.
type DetectOptions struct {
	Now     time.Time     // default time.Now()
	Timeout time.Duration // bound on each git command (default 3s)
	// Shell: how the bash tool runs commands (default "bash (`bash -c` per command)").
	Shell string
}

// Detect takes the environment of a session rooted at roots. It asks git
// about the first root; without git (or outside a repository) the block
// says what it can.
func Detect(ctx context.Context, roots []string, o DetectOptions) Env {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Second
	}
	if o.Shell == "" {
		o.Shell = "bash (each command runs with `bash -c`)"
	}
	e := Env{OS: runtime.GOOS, Arch: runtime.GOARCH, Shell: o.Shell,
		Date: o.Now.Format(time.DateOnly), Roots: append([]string(nil), roots...)}
	if len(roots) > 0 {
		e.Git = detectGit(ctx, roots[0], o.Timeout)
	}
	return e
}

// RepoRoot is the directory holding .git (a directory, or a file in a
// worktree) at or above dir, or "".
func RepoRoot(dir string) string {
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

func detectGit(ctx context.Context, dir string, timeout time.Duration) *Git {
	root := RepoRoot(dir)
	if root == "" {
		return nil
	}
	g := &Git{Root: root}
	if out, err := git(ctx, timeout, dir, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		g.Branch = strings.TrimSpace(string(out))
	} else if _, lookErr := exec.LookPath("git"); lookErr != nil {
		g.Branch = headBranch(root)
	}
	out, err := git(ctx, timeout, dir, "status", "--porcelain", "--untracked-files=normal")
	switch {
	case err != nil:
		g.DirtyUnknown = true
	default:
		g.Dirty = len(bytes.TrimSpace(out)) > 0
	}
	return g
}

func git(ctx context.Context, timeout time.Duration, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "--no-optional-locks"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	return cmd.Output()
}

// headBranch reads the branch from .git/HEAD when git itself is not
// installed (a plain repository only; a worktree's .git file is left alone).
func headBranch(root string) string {
	b, err := os.ReadFile(filepath.Join(root, ".git", "HEAD"))
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
	if !ok {
		return ""
	}
	return ref
}
