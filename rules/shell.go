package rules

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A command line as the shell reads it: the parser undoes quoting and
// escaping the way bash does, so `r''m`, `"rm"` and `\rm` are all the word
// rm, and finds every simple command the line can run, those inside
// $(…), subshells, pipelines and functions included. A deny or ask rule
// is matched against these as well as against the text (anyCommands), so
// a spelling the text matcher misses is still caught; a line the parser
// cannot read is treated like a computed program name (asked). An allow
// rule judges the same parse (PlainCommands, rules/command.go): it covers
// a line only when that is plain commands.

// shellCommand is one simple command of a line.
type shellCommand struct {
	// words are its words with quoting undone; a word holding an expansion
	// keeps the expansion's source text.
	words []string
	// computed names what makes the program name something only running
	// the line would tell ($(…), $VAR, a glob, eval of a variable), or "".
	computed string
}

// readLine reads a command line with bash's grammar: the one reading of a
// line in this package, which both the commands a deny or ask rule looks
// at (shellCommands) and whether allow rules can cover a line
// (plainCommands) come from. ok is false when it does not parse.
func readLine(line string) (f *syntax.File, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	return f, err == nil
}

// shellCommands is every simple command of a line read by readLine.
func shellCommands(f *syntax.File) (cmds []shellCommand) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, is := n.(*syntax.CallExpr); is && len(call.Args) > 0 {
			cmds = append(cmds, readCall(call))
		}
		return true
	})
	return cmds
}

// wrappers run the command their arguments name: its program is the
// first word after their options (and, for env, assignments; for timeout,
// the duration).
var wrappers = map[string]bool{"sudo": true, "doas": true, "env": true, "command": true, "exec": true, "nohup": true,
	"nice": true, "time": true, "timeout": true, "xargs": true, "stdbuf": true, "builtin": true, "setsid": true}

// shells run their -c argument as a command line.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

func readCall(call *syntax.CallExpr) shellCommand {
	c := shellCommand{words: make([]string, len(call.Args))}
	lit := make([]bool, len(call.Args))
	for i, w := range call.Args {
		c.words[i], lit[i] = wordValue(w)
	}
	src := func(i int) string {
		var b strings.Builder
		_ = syntax.NewPrinter().Print(&b, call.Args[i])
		return b.String()
	}
	prog := 0
	for {
		if !lit[prog] || hasGlob(call.Args[prog]) {
			c.computed = src(prog)
			return c
		}
		name := path.Base(c.words[prog])
		switch {
		case name == "eval" || name == "source" || name == ".":
			for i := prog + 1; i < len(c.words); i++ {
				if !lit[i] {
					c.computed = name + " " + src(i)
					return c
				}
			}
			return c
		case shells[name]:
			for i := prog + 1; i+1 < len(c.words); i++ {
				if strings.HasPrefix(c.words[i], "-") && strings.Contains(c.words[i], "c") && !lit[i+1] {
					c.computed = name + " -c " + src(i+1)
					return c
				}
			}
			return c
		case wrappers[name]:
			next := prog + 1
			for next < len(c.words) && lit[next] && (strings.HasPrefix(c.words[next], "-") || isAssignment(c.words[next]) ||
				name == "timeout" && next == prog+1) {
				next++
			}
			if next == len(c.words) {
				return c
			}
			prog = next
		default:
			return c
		}
	}
}

// wordValue is a word with its quoting undone; lit is false when it holds
// an expansion (parameter, command, arithmetic, process substitution, an
// ANSI-C escape), whose value only running the line would tell.
func wordValue(w *syntax.Word) (v string, lit bool) {
	var b strings.Builder
	lit = true
	var parts func(ps []syntax.WordPart, quoted bool)
	parts = func(ps []syntax.WordPart, quoted bool) {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(unescape(p.Value, quoted))
			case *syntax.SglQuoted:
				if p.Dollar && strings.Contains(p.Value, `\`) {
					lit = false
				}
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if p.Dollar {
					lit = false
				}
				parts(p.Parts, true)
			default:
				lit = false
				_ = syntax.NewPrinter().Print(&b, p)
			}
		}
	}
	parts(w.Parts, false)
	return b.String(), lit
}

// unescape undoes backslashes as the shell does: outside quotes a
// backslash quotes any character (and joins lines); inside double quotes
// only $ ` " \ and a newline.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasGlob reports whether a word has unquoted glob or brace characters,
// which the shell expands into names (/bin/r? is rm).
func hasGlob(w *syntax.Word) bool {
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && l.Value == "[" {
			return false // the test command
		}
	}
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && hasUnescaped(l.Value, "*?[{~") {
			return true
		}
	}
	return false
}

func hasUnescaped(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte(chars, s[i]) >= 0 {
			return true
		}
	}
	return false
}

// normalForms is every way a deny or ask rule's normal pattern looks at
// one command: from each word on (a rule for `rm -rf` also refuses `sudo
// rm -rf /`), the program by its base name and its short flags merged.
func (c shellCommand) normalForms() []string {
	out := make([]string, 0, len(c.words))
	for i := range c.words {
		if f := normalize(c.words[i:]); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// normalize is a command's words in the form rules compare: the program
// by its base name (/bin/rm is rm), then every short-flag word before `--`
// merged into one, its letters sorted and unique (-fr, -rf and -r -f are
// all -fr), then the other words in order.
func normalize(words []string) string {
	prog, flags, rest := normalParts(words, false)
	if prog == "" {
		return ""
	}
	parts := []string{prog}
	if flags != "" {
		parts = append(parts, "-"+flags)
	}
	return strings.Join(append(parts, rest...), " ")
}

// normalParts is normalize's form in its parts; flags without the dash. A
// pattern keeps a program name with * in it as it is (a wildcard, not a
// path).
func normalParts(words []string, pattern bool) (prog, flags string, rest []string) {
	if len(words) == 0 || words[0] == "" {
		return "", "", nil
	}
	prog = words[0]
	if !pattern || !strings.Contains(prog, "*") {
		prog = path.Base(prog)
	}
	var fl []byte
	ended := false
	al := flagAliases[prog]
	for _, w := range words[1:] {
		switch {
		case ended:
			rest = append(rest, w)
		case w == "--":
			ended = true
			rest = append(rest, w)
		case isShortFlags(w):
			fl = append(fl, w[1:]...)
		case al.long[w] != 0:
			fl = append(fl, al.long[w])
		default:
			rest = append(rest, w)
		}
	}
	for i, c := range fl {
		if to := al.short[c]; to != 0 {
			fl[i] = to
		}
	}
	slices.Sort(fl)
	return prog, string(slices.Compact(fl)), rest
}

// aliases are the other spellings of a program's short flags: its long
// options that take no value, and short letters that mean the same as
// another.
type aliases struct {
	long  map[string]byte
	short map[byte]byte
}

// flagAliases spells out, for the programs deny rules are written for
// (deleting, overwriting, forcing), the long options GNU and git document
// as the same as a short flag, so `rm --recursive --force` and `rm -R -f`
// are `rm -rf` to a rule as they are to rm. No table can know every
// program: the sandbox, not this, is the boundary (README, "Sandbox").
var flagAliases = map[string]aliases{
	"rm": {long: map[string]byte{"--recursive": 'r', "--force": 'f', "--dir": 'd', "--verbose": 'v'},
		short: map[byte]byte{'R': 'r'}},
	"cp": {long: map[string]byte{"--recursive": 'r', "--force": 'f', "--archive": 'a', "--no-clobber": 'n', "--verbose": 'v'},
		short: map[byte]byte{'R': 'r'}},
	"mv":    {long: map[string]byte{"--force": 'f', "--no-clobber": 'n', "--verbose": 'v'}},
	"chmod": {long: map[string]byte{"--recursive": 'R', "--verbose": 'v', "--changes": 'c'}},
	"chown": {long: map[string]byte{"--recursive": 'R', "--verbose": 'v', "--changes": 'c'}},
	"chgrp": {long: map[string]byte{"--recursive": 'R', "--verbose": 'v', "--changes": 'c'}},
	"git":   {long: map[string]byte{"--force": 'f', "--delete": 'd'}},
}

// isShortFlags reports whether w is a word of short flags: -x, -xyz.
func isShortFlags(w string) bool {
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// normalPattern compiles a command pattern's words (a prefix when prefix)
// into the regexp matching the normal form of a command (normalize): its
// short flags a set the command's must include (`rm -rf` refuses `rm -rfv`
// too), and where it names none, the command may have some after its
// program (`git push:*` still matches `git push -f`).
func normalPattern(words []string, prefix bool) string {
	prog, flags, rest := normalParts(words, true)
	var b strings.Builder
	b.WriteString("^" + wild(prog))
	const alnum = "[0-9A-Za-z]*"
	if flags == "" {
		b.WriteString("(?: -[0-9A-Za-z]+)?")
	} else {
		b.WriteString(" -" + alnum)
		for i := 0; i < len(flags); i++ {
			b.WriteString(regexp.QuoteMeta(flags[i:i+1]) + alnum)
		}
	}
	for _, w := range rest {
		b.WriteString(" " + wild(w))
	}
	if prefix {
		b.WriteString(`(?: |$)`)
	} else {
		b.WriteString("$")
	}
	return b.String()
}
