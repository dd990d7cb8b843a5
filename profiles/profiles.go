// Package profiles is what a subagent may be: a name and a description the
// parent model chooses by, the tools it may use (an allow and a deny list,
// or read-only tools only), the model it runs on, and instructions. Two are
// built in (general, explorer); users and projects add their own as
// Markdown files with YAML front matter, the shape of Claude Code's agent
// files:
//
//	---
//	name: reviewer
//	description: Reviews a change for bugs and says where they are
//	tools: read, grep, glob
//	model: small
//	---
//	You review code. Report each bug with its file and line.
//
// The package only reads and checks profiles; what a profile does to a
// subagent's tools (a registry restriction) is its user's business.
package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Profile is one kind of subagent.
type Profile struct {
	Name string
	// Description is what the parent model reads to decide when to use it.
	Description string
	// Tools, when not nil, are the only tools it may use; Deny are tools
	// it may not use. Both name global tools, as registry.Restriction does.
	Tools []string
	Deny  []string
	// ReadOnly: only tools whose facts say they change nothing
	// (registry.Facts.ReadOnly), whatever else the lists say.
	ReadOnly bool
	// Model names a model of the catalog; "": the parent's.
	Model string
	// Instructions follow the parent's system prompt.
	Instructions string
	// Source is where it came from: "built-in" or the file's path.
	Source string
}

// BuiltIn is the source of the built-in profiles.
const BuiltIn = "built-in"

// Builtins are the profiles every session has.
func Builtins() []Profile {
	return []Profile{
		{Name: "general", Source: BuiltIn,
			Description: "your tools; a self-contained multi-step task whose details you need not see"},
		{Name: "explorer", Source: BuiltIn, ReadOnly: true,
			Description:  "read-only tools (read, grep, glob, web_fetch…): finds and reads code and its documentation, answers questions about it",
			Instructions: "You are an explorer: you can only look, never change anything. Search and read what the task needs, then answer it precisely, citing files and lines."},
	}
}

// Dir is a directory of profile files.
type Dir struct {
	Path string
	// Kind says whose it is, for messages: "user" or "project".
	Kind string
}

// Set is the profiles in effect, by name: the built-ins, then the user's,
// then the project's, each replacing one of the same name before it.
type Set struct {
	byName map[string]Profile
	names  []string // sorted
}

// Get returns the profile named name.
func (s *Set) Get(name string) (Profile, bool) {
	p, ok := s.byName[name]
	return p, ok
}

// List returns the profiles sorted by name.
func (s *Set) List() []Profile {
	out := make([]Profile, 0, len(s.names))
	for _, n := range s.names {
		out = append(out, s.byName[n])
	}
	return out
}

// Load reads the profile files of dirs (later dirs win) over the built-ins.
// A file that cannot be used costs that file only: it is left out and errs
// says which and why, so the editor can tell the user. check (nil: none)
// is what the user of the profiles knows besides (that its tools and its
// model exist): a file it refuses is left out the same way, before it can
// take the place of a profile of the same name. A missing directory is no
// error.
func Load(check func(Profile) error, dirs ...Dir) (*Set, []error) {
	s := &Set{byName: map[string]Profile{}}
	for _, p := range Builtins() {
		s.byName[p.Name] = p
	}
	var errs []error
	for _, d := range dirs {
		if d.Path == "" {
			continue
		}
		entries, err := os.ReadDir(d.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("%s profiles in %s: %w", d.Kind, d.Path, err))
			}
			continue
		}
		seen := map[string]string{}
		for _, e := range entries {
			if e.IsDir() || !strings.EqualFold(filepath.Ext(e.Name()), ".md") {
				continue
			}
			path := filepath.Join(d.Path, e.Name())
			b, err := os.ReadFile(path)
			if err != nil {
				errs = append(errs, fmt.Errorf("profile %s: %w", path, err))
				continue
			}
			p, err := Parse(path, b)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if check != nil {
				if err := check(p); err != nil {
					errs = append(errs, fmt.Errorf("profile %s: %w; it is left out", path, err))
					continue
				}
			}
			if other, dup := seen[p.Name]; dup {
				errs = append(errs, fmt.Errorf("profile %s: the name %q is taken by %s in the same directory; this file is left out", path, p.Name, other))
				continue
			}
			seen[p.Name] = path
			s.byName[p.Name] = p
		}
	}
	for n := range s.byName {
		s.names = append(s.names, n)
	}
	slices.Sort(s.names)
	return s, errs
}

// front is the front matter a profile file may have; any other key is a
// mistake, said loud.
type front struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Tools       yaml.Node `yaml:"tools"`
	Deny        yaml.Node `yaml:"disallowedTools"`
	ReadOnly    bool      `yaml:"readOnly"`
	Model       string    `yaml:"model"`
}

// Parse reads one profile file: front matter between "---" lines, then the
// instructions. The error names the file and what is wrong.
func Parse(path string, b []byte) (Profile, error) {
	bad := func(format string, args ...any) (Profile, error) {
		return Profile{}, fmt.Errorf("profile %s: %s", path, fmt.Sprintf(format, args...))
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return bad("it must start with front matter between two \"---\" lines (name, description, tools, disallowedTools, readOnly, model)")
	}
	// rest starts with the newline that ends the opening line, so an
	// empty front matter's closing line is found like any other.
	rest := text[len("---"):]
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return bad("the front matter has no closing \"---\" line")
	}
	head, body := rest[1:end+1], rest[end+len("\n---"):]
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		if strings.TrimSpace(body[:i]) != "" {
			return bad("the closing \"---\" line has more on it")
		}
		body = body[i+1:]
	} else if strings.TrimSpace(body) != "" {
		return bad("the closing \"---\" line has more on it")
	} else {
		body = ""
	}
	var f front
	dec := yaml.NewDecoder(strings.NewReader(head))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) { // io.EOF: no keys at all
		return bad("front matter: %v", err)
	}
	if f.Name == "" {
		return bad("the front matter has no name")
	}
	if !validName(f.Name) {
		return bad("name %q: use lowercase letters, digits, '-' and '_' (at most 64)", f.Name)
	}
	if strings.TrimSpace(f.Description) == "" {
		return bad("the front matter has no description (the parent model chooses a profile by it)")
	}
	// Lines in messages are the file's: the front matter starts on line 2.
	tools, err := names(&f.Tools, 1)
	if err != nil {
		return bad("tools: %v", err)
	}
	deny, err := names(&f.Deny, 1)
	if err != nil {
		return bad("disallowedTools: %v", err)
	}
	return Profile{Name: f.Name, Description: strings.TrimSpace(f.Description), Tools: tools, Deny: deny,
		ReadOnly: f.ReadOnly, Model: strings.TrimSpace(f.Model), Instructions: strings.TrimSpace(body), Source: path}, nil
}

// names reads a tool list written as YAML list or, as Claude Code writes
// it, one comma-separated string. nil: the key is absent.
func names(n *yaml.Node, off int) ([]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		out := []string{}
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case yaml.SequenceNode:
		out := []string{}
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || strings.TrimSpace(c.Value) == "" {
				return nil, fmt.Errorf("line %d: each entry must be a tool name", c.Line+off)
			}
			out = append(out, strings.TrimSpace(c.Value))
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: a list of tool names, or one string of names separated by commas", n.Line+off)
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
