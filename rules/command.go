package rules

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// anyCommands cuts a command line at everything the shell could start a
// command after (;, &, |, newlines, parentheses, $( and backquotes), quotes
// or not, and drops the quote characters: what a deny or ask rule looks
// for. It finds more commands than the shell would run (text in quotes
// too), so a deny rule errs towards refusing.
func anyCommands(line string) []string {
	line = strings.NewReplacer(`"`, " ", `'`, " ", `\`, "").Replace(line)
	f := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(";&|\n\r()`{}", r) || r == '$' })
	out := make([]string, 0, len(f)+1)
	out = append(out, line)
	for _, c := range f {
		if c = collapse(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// PlainCommands cuts a command line into its commands when it is only
// plain commands joined by ;, &&, || and | (ok true): no substitution,
// expansion of a variable, redirection (other than 2>&1), background job,
// subshell, brace group or braces, compound command (if, for, [[ …),
// backslash, or variable set for what follows (a leading NAME=value,
// export, declare, local), whose effects no prefix rule can vouch for. A
// command is its words as written (quotes kept), blanks collapsed, a
// comment left out. An allow rule covers a line by its commands, and the
// bash tool remembers an "always" answer as the program of a line that is
// one plain command, so both judge a line the same way, by the reading
// deny and ask rules use (readLine).
func PlainCommands(line string) (cmds []string, ok bool) {
	f, ok := readLine(line)
	if !ok {
		return nil, false
	}
	return plainCommands(f, line)
}

// plainCommands is PlainCommands of line as readLine read it into f.
func plainCommands(f *syntax.File, line string) (cmds []string, ok bool) {
	var plain func(st *syntax.Stmt) bool
	plain = func(st *syntax.Stmt) bool {
		if st.Negated || st.Background || st.Coprocess || st.Disown {
			return false
		}
		for _, r := range st.Redirs {
			// Standard error joined to output: no file is written.
			if r.N == nil || line[r.Pos().Offset():r.End().Offset()] != "2>&1" {
				return false
			}
		}
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			return (c.Op == syntax.AndStmt || c.Op == syntax.OrStmt || c.Op == syntax.Pipe) && plain(c.X) && plain(c.Y)
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 || len(c.Args) == 0 {
				return false
			}
			words := make([]string, len(c.Args))
			for i, w := range c.Args {
				if !plainWord(w, line) {
					return false
				}
				words[i] = line[w.Pos().Offset():w.End().Offset()]
			}
			cmds = append(cmds, collapse(strings.Join(words, " ")))
			return true
		}
		return false
	}
	for _, st := range f.Stmts {
		if !plain(st) {
			return nil, false
		}
	}
	return cmds, len(cmds) > 0
}

// plainWord reports whether a word of line is only text and quotes: no
// expansion of any kind, no braces, no $'…' or $"…", no backslash outside
// single quotes. It looks at the text as written, which still holds the
// backslash of a line continuation the parser has taken out.
func plainWord(w *syntax.Word, line string) bool {
	src := func(n syntax.Node) string { return line[n.Pos().Offset():n.End().Offset()] }
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(src(p), "\\$`{}()<>") {
				return false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			if p.Dollar || strings.ContainsAny(src(p), "\\$`") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isAssignment reports whether a command's first word is NAME=value, which
// the shell takes as a variable for the command (PATH=..., LD_PRELOAD=...)
// rather than its program: NAME a shell identifier, unquoted.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
