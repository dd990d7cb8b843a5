package bash

import (
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/rules"
)

// permission asks about every command. What an "always" answer remembers
// is the program and its subcommand ("bash:go test"), but only for a simple
// command: anything the shell could turn into a second command (;, &&, |,
// $(…), redirections, a newline…) is remembered as the exact command line,
// so allowing `go test` never allows `go test && rm -rf ~`.
//
// A workdir outside the session's roots (symlinks evaluated) is part of what
// is asked and remembered: allowing `go test` in the workspace does not
// allow it elsewhere.
func permission(c *registry.Call, in Args) *registry.Permission {
	cmd := strings.TrimSpace(in.Command)
	p := &registry.Permission{Reason: "run `" + short(cmd, 200) + "`"}
	if dir := workdir(c, in.Workdir); !insideRoots(c, dir) {
		real := evalDir(dir)
		p.Reason += " in " + real + ", outside the workspace"
		p.Key, p.Subject = "bash:"+cmd+" @ "+real, exactSubject(cmd)+" outside the workspace"
		return p
	}
	if prefix, ok := commandPrefix(cmd); ok {
		p.Key, p.Subject = "bash:"+prefix, prefixSubject(prefix)
		if !strings.ContainsAny(prefix, "*()") {
			p.Rule = "Bash(" + prefix + ":*)"
		}
		return p
	}
	p.Key, p.Subject = "bash:"+cmd, exactSubject(cmd)
	return p
}

// maxSubject bounds a subject in runes so that "Always reject " and it fit
// an option name whole (mapping.MaxOptionName): a name cut mid-command
// ("Always allow echo from") does not say what the answer will allow.
const maxSubject = 44

// prefixSubject says that a rule covers every command with that program
// and subcommand: "`go test` commands".
func prefixSubject(prefix string) string {
	if s := "`" + prefix + "` commands"; utf8.RuneCountInString(s) <= maxSubject {
		return s
	}
	return "commands of this program" // a long program path
}

// exactSubject says that a rule covers this command line only:
// "exactly `go test && rm -rf ~`", or "this exact command" for one too long
// to name whole.
func exactSubject(cmd string) string {
	if s := "exactly `" + cmd + "`"; utf8.RuneCountInString(s) <= maxSubject && !strings.ContainsAny(cmd, "\n\r") {
		return s
	}
	return "this exact command"
}

// commandPrefix returns "program subcommand" (or "program") of a line that
// is one plain command as rules.PlainCommands reads it (the reading allow
// rules judge lines by, so the rule an answer remembers covers the lines
// it was given for), and false for any other line.
func commandPrefix(cmd string) (string, bool) {
	cmds, ok := rules.PlainCommands(cmd)
	if !ok || len(cmds) != 1 {
		return "", false
	}
	words := strings.Fields(cmds[0])
	// A quoted or escaped program name hides what runs: such a line is
	// remembered exactly.
	if strings.ContainsAny(words[0], `'"\`) {
		return "", false
	}
	prefix := words[0]
	if len(words) > 1 && isSubcommand(words[1]) {
		prefix += " " + words[1]
	}
	return prefix, true
}

// isSubcommand: a plain word like "test" or "run-script", not a flag or a path.
func isSubcommand(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':') {
			return false
		}
	}
	return true
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// insideRoots reports whether dir, symlinks evaluated, is inside one of the
// call's roots. No roots: no boundary.
func insideRoots(c *registry.Call, dir string) bool {
	if len(c.Roots) == 0 {
		return true
	}
	real := evalDir(dir)
	for _, r := range c.Roots {
		rel, err := filepath.Rel(evalDir(r), real)
		if err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// evalDir resolves symlinks in dir when it exists.
func evalDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}
