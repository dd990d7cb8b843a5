package rules

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Target is what rules look at in one call.
type Target struct {
	Tool    string   // the call's tool name
	Command string   // bash: the command line
	Paths   []string // file tools: the absolute path, and where its symlinks lead when that differs
	Domain  string   // web_fetch: the host its URL names (Domain)
}

// TargetOf reads the parts of a call that rules match: the command of a
// bash call, the path of a file tool's call (relative paths resolved
// against cwd; a search without a path searches cwd). Arguments that do not
// decode leave the target with the tool name only.
func TargetOf(tool string, args json.RawMessage, cwd string) Target {
	t := Target{Tool: tool}
	var a struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
		URL      string `json:"url"`
	}
	_ = json.Unmarshal(args, &a)
	switch tool {
	case "bash":
		t.Command = a.Command
	case "read", "write", "edit":
		t.Paths = paths(cwd, a.FilePath)
	case "glob", "grep":
		t.Paths = paths(cwd, a.Path)
	case "web_fetch":
		t.Domain = Domain(a.URL)
	}
	return t
}

// DecideCall decides a call from its arguments, as Decide(TargetOf(...)),
// but reads nothing of them when there are no rules: every call asks, and
// most sessions have none, so decoding the arguments and resolving
// symlinks would be paid for nothing.
func (s Set) DecideCall(tool string, args json.RawMessage, cwd string) (r Rule, ok bool) {
	if len(s) == 0 {
		return Rule{}, false
	}
	return s.Decide(TargetOf(tool, args, cwd))
}

func paths(cwd, p string) []string {
	if p == "" {
		p = cwd
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	out := []string{p}
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		out = append(out, real)
	} else if err != nil {
		// A file not there yet (a write): its directory may still be a link.
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil && dir != filepath.Dir(p) {
			out = append(out, filepath.Join(dir, filepath.Base(p)))
		}
	}
	return out
}

// Set is the rules in effect for a session, in no particular order: deny
// wins over ask, ask over allow, whatever the order or source.
type Set []Rule

// computedKind is the Source.Kind of the ask Decide makes for a command
// whose program name is computed.
const computedKind = "computed"

// Decide finds the rule that decides t: a deny rule that matches, else an
// ask rule, else an allow rule (for a command line, one that covers every
// command in it). ok is false when no rule speaks. A deny or ask rule for
// bash matches a command line's text and also each command as the shell
// reads it (rules/shell.go); while a deny rule for bash exists, a command
// whose program name is computed ($(…), $VAR, eval of a variable) or a
// line the parser cannot read is asked about: no rule could see what it
// runs.
func (s Set) Decide(t Target) (r Rule, ok bool) {
	var cmds, norms []string // the commands a deny or ask rule looks at, cut once
	var computed string
	// The line as bash reads it, read once for the deny, ask and allow rules.
	read := sync.OnceValues(func() (*syntax.File, bool) { return readLine(t.Command) })
	if t.Command != "" && strings.EqualFold(t.Tool, "bash") && s.hasCommandRule(Deny, Ask) {
		cmds = anyCommands(t.Command)
		f, ok := read()
		var parsed []shellCommand
		if ok {
			parsed = shellCommands(f)
		} else {
			computed = t.Command
		}
		for _, c := range parsed {
			norms = append(norms, c.normalForms()...)
			if computed == "" {
				computed = c.computed
			}
		}
	}
	for _, e := range []Effect{Deny, Ask} {
		for _, r := range s {
			if r.Effect == e && (r.matches(t, cmds) || r.matchesNormal(norms)) {
				return r, true
			}
		}
		if e == Deny && computed != "" && s.hasCommandRule(Deny) {
			return Rule{Effect: Ask, Text: computed, Source: Source{Kind: computedKind}}, true
		}
	}
	return s.allowed(t, read)
}

// hasCommandRule reports whether a rule of one of the effects is about
// bash: a deny or ask rule makes Decide read the line's commands, a deny
// rule makes it ask about a computed program name.
func (s Set) hasCommandRule(effects ...Effect) bool {
	for _, r := range s {
		if r.tool == "bash" && slices.Contains(effects, r.Effect) {
			return true
		}
	}
	return false
}

// matchesNormal reports whether a bash deny or ask rule with a pattern
// matches one of the normal forms of a line's commands.
func (r Rule) matchesNormal(norms []string) bool {
	if r.normal == nil {
		return false
	}
	for _, n := range norms {
		if r.normal.MatchString(n) {
			return true
		}
	}
	return false
}

// allowed finds the allow rule for t. A command line is allowed only when
// it is plain commands joined by ;, &&, || or | and each is allowed by some
// rule: allowing `go test` never allows `go test && rm -rf ~`.
func (s Set) allowed(t Target, read func() (*syntax.File, bool)) (Rule, bool) {
	if t.Tool == "bash" && t.Command != "" {
		f, ok := read()
		var cmds []string
		if ok {
			cmds, ok = plainCommands(f, t.Command)
		}
		if !ok {
			// A substitution, redirection or background job: an allow
			// rule that names the whole tool still covers it.
			for _, r := range s {
				if r.Effect == Allow && r.tool == "bash" && !r.has {
					return r, true
				}
			}
			return Rule{}, false
		}
		var first Rule
		for i, c := range cmds {
			found := false
			for _, r := range s {
				if r.Effect == Allow && r.matchesCommand(c, true) {
					if i == 0 {
						first = r
					}
					found = true
					break
				}
			}
			if !found {
				return Rule{}, false
			}
		}
		return first, true
	}
	for _, r := range s {
		if r.Effect == Allow && r.coversTool(t.Tool) && (!r.has || r.matchesTarget(t)) {
			return r, true
		}
	}
	return Rule{}, false
}

// matches reports whether a deny or ask rule speaks about t, whose
// command line is cut into cmds.
func (r Rule) matches(t Target, cmds []string) bool {
	if !r.coversTool(t.Tool) {
		return false
	}
	switch {
	case !r.has:
		return true
	case r.cmd != nil:
		for _, c := range cmds {
			if r.matchesCommand(c, false) {
				return true
			}
		}
		return false
	}
	return r.matchesTarget(t)
}

// matchesTarget matches a rule's pattern against what the call names: a
// domain for a WebFetch rule, else a path.
func (r Rule) matchesTarget(t Target) bool {
	if r.domain != "" {
		return matchesDomain(r.domain, t.Domain)
	}
	return r.matchesAnyPath(t.Paths)
}

// Specific reports whether the rule names what a call targets (a pattern:
// a command, a path, a domain) rather than every call of a tool.
func (r Rule) Specific() bool { return r.has }

func (r Rule) matchesAnyPath(ps []string) bool {
	for _, p := range ps {
		if r.matchesPath(p) {
			return true
		}
	}
	return false
}

// coversTool: tool names compare case-insensitively; Read also covers the
// searches (glob, grep), Edit also covers write, and mcp__server (or
// mcp__server__*) every tool of that server.
func (r Rule) coversTool(tool string) bool {
	tool = strings.ToLower(tool)
	switch {
	case r.tool == tool:
		return true
	case r.tool == "read":
		return tool == "glob" || tool == "grep"
	case r.tool == "edit":
		return tool == "write"
	case webTools[r.tool] != "":
		return tool == webTools[r.tool]
	case strings.HasPrefix(r.tool, "mcp__"):
		server := strings.TrimSuffix(strings.TrimSuffix(r.tool, "*"), "__")
		return strings.Count(server, "__") == 1 && strings.HasPrefix(tool, server+"__")
	}
	return false
}

// matchesCommand matches one command. exact: from its first word, as an
// allow rule must; otherwise the pattern may start at any word, so a deny
// rule for `rm -rf` also refuses `sudo rm -rf /` and `xargs rm -rf`.
func (r Rule) matchesCommand(c string, exact bool) bool {
	if r.tool != "bash" {
		return false
	}
	if r.cmd == nil {
		return true
	}
	c = collapse(c)
	if exact {
		return r.cmd.MatchString(c)
	}
	return r.anywhere.MatchString(c)
}

// matchesPath matches an absolute path. A pattern with no slash matches
// the file's name in any directory (like .gitignore); one starting with /
// is absolute, with ~/ in the home directory, any other relative to the
// rule's root. ** matches any number of directories.
func (r Rule) matchesPath(p string) bool {
	pat := filepath.ToSlash(r.arg)
	p = filepath.ToSlash(p)
	if !strings.Contains(pat, "/") {
		ok, _ := path.Match(pat, path.Base(p))
		return ok
	}
	switch {
	case strings.HasPrefix(pat, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return false
		}
		pat = path.Join(filepath.ToSlash(home), pat[2:])
	case strings.HasPrefix(pat, "/"):
	default:
		if r.Root == "" {
			return false
		}
		pat = path.Join(filepath.ToSlash(r.Root), pat)
	}
	return globMatch(strings.Split(strings.TrimPrefix(pat, "/"), "/"), strings.Split(strings.TrimPrefix(p, "/"), "/"))
}

// globMatch matches path segments, ** standing for any number of them.
func globMatch(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := len(segs); i >= 0; i-- {
				if globMatch(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
