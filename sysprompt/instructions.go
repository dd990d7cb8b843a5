package sysprompt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// InstructionsFile is the cross-agent name of a project's instructions.
const InstructionsFile = "AGENTS.md"

// DefaultMaxInstructionBytes caps each instructions file in the prompt.
const DefaultMaxInstructionBytes = 32 << 10

// Instruction is one AGENTS.md file as it goes into the prompt.
type Instruction struct {
	Path string // absolute
	Text string // at most the cap, cut at a line end
	Size int64  // the file's size
	Cut  bool   // Text is shorter than the file
}

// InstructionOptions say where instructions are looked for.
type InstructionOptions struct {
	// Workspace is the session's cwd; RepoRoot the repository around it
	// ("" outside one: the workspace alone is searched).
	Workspace, RepoRoot string
	// UserDir holds the user-wide AGENTS.md (…/acp-bridge); "" for none.
	UserDir  string
	MaxBytes int // per file; default DefaultMaxInstructionBytes
}

// UserDir is where the user-wide instructions live: $XDG_CONFIG_HOME/acp-bridge,
// else ~/.config/acp-bridge; "" when neither can be told.
func UserDir() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "acp-bridge")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "acp-bridge")
	}
	return ""
}

// LoadInstructions reads the AGENTS.md files in effect, farthest first and
// nearest last (the user-wide one, the repository root's, …, the
// workspace's), so that the nearest has the last word. A file that cannot be
// read is left out; errs says which and why.
func LoadInstructions(o InstructionOptions) (out []Instruction, errs []error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxInstructionBytes
	}
	var paths []string
	if o.UserDir != "" {
		paths = append(paths, filepath.Join(o.UserDir, InstructionsFile))
	}
	paths = append(paths, chain(o.Workspace, o.RepoRoot)...)
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		in, err := readInstruction(p, o.MaxBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		case strings.TrimSpace(in.Text) != "":
			out = append(out, in)
		}
	}
	return out, errs
}

// chain lists AGENTS.md paths from repoRoot down to workspace; the
// workspace's alone when it is not inside repoRoot.
func chain(workspace, repoRoot string) []string {
	if workspace == "" {
		return nil
	}
	ws := filepath.Clean(workspace)
	var dirs []string
	if rel, err := filepath.Rel(filepath.Clean(repoRoot), ws); repoRoot != "" && err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		for d := ws; ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if d == filepath.Clean(repoRoot) || filepath.Dir(d) == d {
				break
			}
		}
	} else {
		dirs = []string{ws}
	}
	out := make([]string, 0, len(dirs))
	for i := len(dirs) - 1; i >= 0; i-- {
		out = append(out, filepath.Join(dirs[i], InstructionsFile))
	}
	return out
}

func readInstruction(path string, max int) (Instruction, error) {
	f, err := os.Open(path)
	if err != nil {
		return Instruction{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Instruction{}, err
	}
	if !st.Mode().IsRegular() {
		return Instruction{}, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return Instruction{}, fmt.Errorf("%s: %w", path, err)
	}
	in := Instruction{Path: path, Size: st.Size()}
	if len(b) > max {
		b = b[:max]
		if i := strings.LastIndexByte(string(b), '\n'); i > 0 {
			b = b[:i+1]
		}
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1] // no broken character at the cut
		}
		in.Cut = true
	}
	in.Text = strings.TrimPrefix(string(b), "\ufeff")
	return in, nil
}

// renderInstructions is the instructions section of the prompt.
func renderInstructions(ins []Instruction) string {
	if len(ins) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Project instructions\n\nThe user and the project keep these instructions in AGENTS.md files. Follow them; where they disagree, the later (nearer) file wins.")
	for _, in := range ins {
		fmt.Fprintf(&b, "\n\n## %s\n\n%s", in.Path, strings.TrimSpace(strings.ReplaceAll(in.Text, "\r\n", "\n")))
		if in.Cut {
			fmt.Fprintf(&b, "\n\n[The rest of this file was cut: the first %d of its %d bytes are shown. Read the file for the rest.]", len(in.Text), in.Size)
		}
	}
	return b.String()
}

// FileInfo is what is said about an instructions file without its text.
type FileInfo struct {
	Path  string
	Size  int64
	Shown int // bytes in the prompt
	Cut   bool
}

// Info describes the file.
func (in Instruction) Info() FileInfo {
	return FileInfo{Path: in.Path, Size: in.Size, Shown: len(in.Text), Cut: in.Cut}
}

// Summary lists the instruction files for /help and /tools, one a line.
func Summary(files []FileInfo) string {
	if len(files) == 0 {
		return "No AGENTS.md instructions are in effect (`/init` writes a starter one)."
	}
	var b strings.Builder
	b.WriteString("Instructions in effect (nearest last):\n")
	for _, f := range files {
		fmt.Fprintf(&b, "\n- `%s` (%d bytes", f.Path, f.Size)
		if f.Cut {
			fmt.Fprintf(&b, ", cut to %d", f.Shown)
		}
		b.WriteString(")")
	}
	return b.String()
}
