// Package rules is the permission rules users write: which tool calls are
// allowed, denied or asked about, by tool and argument pattern. It parses
// the rule strings (`Bash(npm run test:*)`, `Read(./.env)`,
// `mcp__github__create_issue`) and decides a call against a set of them.
// It knows the argument names of the reference tools (bash's command, the
// file tools' paths) and nothing of where rules come from or what the
// decision does: the agent puts a deny in front of every call as a guard,
// an ask into the permission prompt, an allow in place of the tool's own
// approval request. Its reading of a command line (PlainCommands) is also
// the bash tool's, which remembers "always" answers as the rules this
// package reads.
package rules

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Effect is what a rule does to a call it matches.
type Effect string

const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
	Ask   Effect = "ask"
)

// Source is where a rule was written, shown with it (the /permissions list,
// a refusal, a prompt).
type Source struct {
	// Kind is "user" (the user's config file), "project" (the repository's
	// settings file) or "remembered" (an "always" answer in the editor).
	Kind string
	// Path is the file the rule is kept in.
	Path string
}

func (s Source) String() string {
	if s.Path == "" {
		return s.Kind
	}
	return s.Kind + ", " + s.Path
}

// Rule is one parsed rule.
type Rule struct {
	Effect Effect
	// Text is the rule as written, e.g. `Bash(npm run test:*)`.
	Text   string
	Source Source
	// Root anchors relative path patterns: the project a project or
	// remembered rule belongs to, the session's workspace for a user rule.
	Root string

	tool string         // lower-case tool name or family ("bash", "read", "edit", "mcp__github")
	arg  string         // the pattern inside the parentheses
	has  bool           // the rule has a parenthesised pattern
	cmd  *regexp.Regexp // a whole command, from its first word
	// domain is a WebFetch rule's host pattern, normalised (web.go)
	domain string
	// anywhere is cmd starting at any word: a deny or ask rule's match
	anywhere *regexp.Regexp
	// normal matches a command's normal form (normalize, rules/shell.go):
	// what a deny or ask rule also compares, so spelling does not escape it
	normal *regexp.Regexp
}

// String names the rule and where it comes from, for messages.
func (r Rule) String() string {
	if r.Source.Kind == computedKind {
		return fmt.Sprintf("rule that a command whose program is computed (`%s`) is asked about while a Bash deny rule exists", r.Text)
	}
	return fmt.Sprintf("%s rule `%s` (%s)", r.Effect, r.Text, r.Source)
}

// ruleText is Name or Name(pattern); the name is a tool name, a tool
// family (Read, Edit) or an MCP server (mcp__server, mcp__server__*).
// Compiled at first use: package initialisation delays the editor's
// initialize answer, and most sessions have no rules.
var ruleText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_*-]+)(?:\((.*)\))?$`) })

// Parse reads one rule. The error says what is wrong in the user's terms.
func Parse(effect Effect, text string, src Source) (Rule, error) {
	switch effect {
	case Allow, Deny, Ask:
	default:
		return Rule{}, fmt.Errorf("unknown rule effect %q (allow, deny or ask)", effect)
	}
	t := strings.TrimSpace(text)
	m := ruleText().FindStringSubmatch(t)
	if m == nil {
		return Rule{}, fmt.Errorf("rule %q is not Tool or Tool(pattern), e.g. Bash(npm run test:*) or Read(./.env)", text)
	}
	r := Rule{Effect: effect, Text: t, Source: src, tool: strings.ToLower(m[1]), arg: strings.TrimSpace(m[2]), has: strings.HasSuffix(t, ")")}
	if r.has && r.arg == "" {
		return Rule{}, fmt.Errorf("rule %q has an empty pattern: leave out the parentheses to match every call of the tool", text)
	}
	if strings.HasSuffix(r.tool, "*") && !strings.HasPrefix(r.tool, "mcp__") {
		return Rule{}, fmt.Errorf("rule %q: only an MCP server's tools take a wildcard (mcp__server__*)", text)
	}
	switch r.tool {
	case "bash":
		if r.has {
			re, anywhere, err := commandPattern(r.arg)
			if err != nil {
				return Rule{}, fmt.Errorf("rule %q: %v", text, err)
			}
			r.cmd, r.anywhere = re, anywhere
			p, prefix := strings.CutSuffix(collapse(r.arg), ":*")
			if r.normal, err = regexp.Compile(normalPattern(strings.Fields(p), prefix)); err != nil {
				return Rule{}, fmt.Errorf("rule %q: %v", text, err)
			}
		}
	case "read", "edit", "write", "glob", "grep":
		if r.has {
			if err := checkGlob(r.arg); err != nil {
				return Rule{}, fmt.Errorf("rule %q: %v", text, err)
			}
		}
	case "webfetch", "web_fetch":
		if r.has {
			d, err := domainPattern(r.arg)
			if err != nil {
				return Rule{}, fmt.Errorf("rule %q: %v", text, err)
			}
			r.domain = d
		}
	default:
		if r.has {
			return Rule{}, fmt.Errorf("rule %q: only Bash, the file tools (Read, Edit, Write, Glob, Grep) and WebFetch take a pattern; name an MCP tool as mcp__server__tool", text)
		}
	}
	return r, nil
}

// commandPattern compiles a command pattern: `prefix:*` matches the prefix
// alone or followed by more words, `*` anywhere else matches any text, and
// anything else matches the command exactly. Whitespace runs count as one
// space. exact matches from the command's first word; anywhere from any
// word (what a deny or ask rule looks for).
func commandPattern(p string) (exact, anywhere *regexp.Regexp, err error) {
	p = collapse(p)
	if p == "" {
		return nil, nil, fmt.Errorf("the command pattern is empty")
	}
	body, tail := wild(p), "$"
	if prefix, ok := strings.CutSuffix(p, ":*"); ok {
		if prefix == "" {
			return nil, nil, fmt.Errorf("`:*` needs a command before it")
		}
		body, tail = wild(prefix), `(?: |$)`
	}
	if exact, err = regexp.Compile("^" + body + tail); err != nil {
		return nil, nil, err
	}
	anywhere, err = regexp.Compile("(?:^| )" + body + tail)
	return exact, anywhere, err
}

// wild quotes s for a regexp, with * matching any text.
func wild(s string) string {
	parts := strings.Split(s, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return strings.Join(parts, ".*")
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func checkGlob(p string) error {
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == "**" {
			continue
		}
		if _, err := filepath.Match(seg, ""); err != nil {
			return fmt.Errorf("bad path pattern %q", p)
		}
	}
	return nil
}
