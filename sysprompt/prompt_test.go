package sysprompt

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFixedIsDeterministicAndOrdered(t *testing.T) {
	env := Env{OS: "linux", Arch: "amd64", Shell: "bash", Date: "2026-12-03", Roots: []string{"/w", "/extra"},
		Git: &Git{Root: "/w", Branch: "main", Dirty: true}}
	ins := []Instruction{{Path: "/u/AGENTS.md", Text: "user rule", Size: 9}, {Path: "/w/AGENTS.md", Text: "project rule", Size: 12}}
	tests := []struct {
		name  string
		parts Parts
		want  []string // in this order
		not   []string
	}{
		{"built-in", Parts{Env: env, Instructions: ins},
			[]string{"You are acp-bridge", "read", "# Project instructions", "## /u/AGENTS.md", "user rule", "## /w/AGENTS.md", "project rule",
				"# Environment", "Platform: linux/amd64", "Shell: bash", "Date: 2026-12-03", "Workspace root (the working directory): /w",
				"Additional workspace root: /extra", "Git: repository at /w, branch `main`, with uncommitted changes"}, nil},
		{"override", Parts{Base: "Be a pirate.", Env: env},
			[]string{"Be a pirate.", "# Environment"}, []string{"You are acp-bridge", "# Project instructions"}},
		{"no git", Parts{Env: Env{Roots: []string{"/w"}}}, []string{"# Environment", "Git: not a git repository"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Fixed(tt.parts)
			if again := Fixed(tt.parts); again != got {
				t.Fatal("the same parts gave different prompts")
			}
			at := 0
			for _, w := range tt.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("missing %q after offset %d in:\n%s", w, at, got)
				}
				at += i + len(w)
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("unexpected %q in:\n%s", n, got)
				}
			}
			if !strings.HasSuffix(got, tt.parts.Env.Render()) {
				t.Error("the environment block is not last: something follows it")
			}
		})
	}
}

func TestSystemTextCoversTheRules(t *testing.T) {
	s := System()
	for _, w := range []string{"Read the files you are about to edit", "Change files with `edit`", "non-interactive",
		"run the project's own checks", "end by saying what changed"} {
		if !strings.Contains(s, w) {
			t.Errorf("system prompt lacks %q", w)
		}
	}
}

func TestEnvRenderGit(t *testing.T) {
	tests := []struct {
		g    Git
		want string
	}{
		{Git{Root: "/r", Branch: "dev"}, "Git: repository at /r, branch `dev`, no uncommitted changes"},
		{Git{Root: "/r"}, "Git: repository at /r, detached HEAD, no uncommitted changes"},
		{Git{Root: "/r", Branch: "x", DirtyUnknown: true}, "uncommitted changes unknown"},
	}
	for _, tt := range tests {
		if got := (Env{Git: &tt.g}).Render(); !strings.Contains(got, tt.want) {
			t.Errorf("got %q, want it to contain %q", got, tt.want)
		}
	}
}

func TestDetectGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	now := time.Date(2026, 12, 3, 23, 59, 0, 0, time.UTC)
	if e := Detect(t.Context(), []string{dir}, DetectOptions{Now: now}); e.Git != nil {
		t.Fatalf("a plain directory detected as a repository: %+v", e.Git)
	}
	run("init", "-q", "-b", "trunk")
	run("commit", "-q", "--allow-empty", "-m", "first")
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	e := Detect(t.Context(), []string{sub}, DetectOptions{Now: now})
	if e.Git == nil || e.Git.Root != dir || e.Git.Branch != "trunk" || e.Git.Dirty || e.Git.DirtyUnknown {
		t.Fatalf("clean repository: got %+v", e.Git)
	}
	if e.Date != "2026-12-03" || e.OS == "" || e.Shell == "" || e.Roots[0] != sub {
		t.Fatalf("env: %+v", e)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if e := Detect(context.Background(), []string{dir}, DetectOptions{Now: now}); e.Git == nil || !e.Git.Dirty {
		t.Fatalf("an untracked file is an uncommitted change: got %+v", e.Git)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadInstructions(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	ws := filepath.Join(repo, "a", "b")
	user := filepath.Join(root, "config", "acp-bridge")
	write(t, filepath.Join(root, InstructionsFile), "above the repository: never read")
	write(t, filepath.Join(repo, InstructionsFile), "repo rules")
	write(t, filepath.Join(repo, "a", InstructionsFile), "   \n") // blank: left out
	write(t, filepath.Join(ws, InstructionsFile), "\ufeffworkspace rules\r\n")
	write(t, filepath.Join(user, InstructionsFile), "user rules")
	if err := os.MkdirAll(filepath.Join(root, "dirws", InstructionsFile), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		o        InstructionOptions
		want     []string // paths, in order
		wantErrs int
	}{
		{"chain", InstructionOptions{Workspace: ws, RepoRoot: repo, UserDir: user},
			[]string{filepath.Join(user, InstructionsFile), filepath.Join(repo, InstructionsFile), filepath.Join(ws, InstructionsFile)}, 0},
		{"workspace is the repository", InstructionOptions{Workspace: repo, RepoRoot: repo},
			[]string{filepath.Join(repo, InstructionsFile)}, 0},
		{"outside a repository", InstructionOptions{Workspace: ws},
			[]string{filepath.Join(ws, InstructionsFile)}, 0},
		{"repository elsewhere", InstructionOptions{Workspace: ws, RepoRoot: filepath.Join(root, "other")},
			[]string{filepath.Join(ws, InstructionsFile)}, 0},
		{"not a file", InstructionOptions{Workspace: filepath.Join(root, "dirws")}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := LoadInstructions(tt.o)
			var paths []string
			for _, in := range got {
				paths = append(paths, in.Path)
			}
			if strings.Join(paths, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("paths:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(tt.want, "\n"))
			}
			if len(errs) != tt.wantErrs {
				t.Fatalf("errors: %v, want %d", errs, tt.wantErrs)
			}
		})
	}
	got, _ := LoadInstructions(InstructionOptions{Workspace: ws, RepoRoot: repo})
	text := renderInstructions(got)
	if !strings.Contains(text, "## "+filepath.Join(ws, InstructionsFile)+"\n\nworkspace rules") || strings.Contains(text, "\ufeff") || strings.Contains(text, "\r") {
		t.Fatalf("BOM or CRLF kept, or heading missing:\n%q", text)
	}
}

func TestInstructionCap(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("é", 20) + "\n" // 41 bytes
	write(t, filepath.Join(dir, InstructionsFile), strings.Repeat(line, 100))
	got, _ := LoadInstructions(InstructionOptions{Workspace: dir, MaxBytes: 100})
	if len(got) != 1 || !got[0].Cut || got[0].Size != 4100 || got[0].Text != line+line {
		t.Fatalf("cut: %+v", got)
	}
	text := renderInstructions(got)
	if !strings.Contains(text, "[The rest of this file was cut: the first 82 of its 4100 bytes are shown.") {
		t.Fatalf("no note of the cut:\n%s", text)
	}
	if s := Summary([]FileInfo{got[0].Info()}); !strings.Contains(s, filepath.Join(dir, InstructionsFile)) || !strings.Contains(s, "cut to 82") {
		t.Fatalf("summary: %s", s)
	}
	if s := Summary(nil); !strings.Contains(s, "No AGENTS.md") {
		t.Fatalf("summary of none: %s", s)
	}
	// A cap shorter than any line: no partial character survives.
	write(t, filepath.Join(dir, InstructionsFile), strings.Repeat("é", 10))
	got, _ = LoadInstructions(InstructionOptions{Workspace: dir, MaxBytes: 5})
	if len(got) != 1 || got[0].Text != "éé" {
		t.Fatalf("cut inside a character: %+v", got)
	}
}

func TestUserDir(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	if got := UserDir(); got != filepath.Join("/cfg", "acp-bridge") {
		t.Fatalf("UserDir = %q", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative") // not absolute: ignored, as the spec says
	t.Setenv("HOME", "/home/u")
	if got := UserDir(); got != filepath.Join("/home/u", ".config", "acp-bridge") {
		t.Fatalf("UserDir = %q", got)
	}
}

func TestStarter(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/thing\n\ngo 1.26\n")
	write(t, filepath.Join(dir, "Makefile"), "build:\n\tgo build\nlint:\n\tx\n.PHONY: build\n")
	write(t, filepath.Join(dir, "README.md"), "# Thing\n\n![badge](x)\nThing does things.\n")
	write(t, filepath.Join(dir, "cmd", "thing", "main.go"), "package main\n")
	write(t, filepath.Join(dir, "node_modules", "x"), "")
	got := Starter(dir)
	for _, w := range []string{"# Thing\n", "Thing does things.", "Go (module `example.com/thing`)", "- `cmd/`",
		"- Test: `go test ./...`", "- Make lint: `make lint`", "## Conventions"} {
		if !strings.Contains(got, w) {
			t.Errorf("starter lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "node_modules") {
		t.Errorf("starter lists node_modules:\n%s", got)
	}
	empty := Starter(t.TempDir())
	if !strings.Contains(empty, "(How to build and test this project") {
		t.Errorf("an empty workspace gets a placeholder:\n%s", empty)
	}
}
