package rules

import "strings"

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
// redirection (other than 2>&1), background job, subshell, brace group,
// backslash or leading NAME=value, whose effects no prefix rule can vouch
// for. It is the one shell lexer of the module: an allow rule covers a
// line by its commands, and the bash tool remembers an "always" answer as
// the program of a line that is one plain command, so both judge a line
// the same way.
func PlainCommands(line string) (cmds []string, ok bool) {
	var cur strings.Builder
	inSingle, inDouble := false, false
	wordStart := true // the next rune starts a word (outside quotes)
	cut := func() {
		if c := collapse(cur.String()); c != "" {
			cmds = append(cmds, c)
		}
		cur.Reset()
	}
	for i := 0; i < len(line); i++ {
		r := line[i] // the runes that matter are ASCII; others are copied byte by byte
		blank := false
		switch {
		case inSingle:
			inSingle = r != '\''
		case r == '\\':
			return nil, false
		case inDouble:
			switch r {
			case '"':
				inDouble = false
			case '$', '`':
				return nil, false
			}
		case r == '\'':
			inSingle = true
		case r == '"':
			inDouble = true
		case r == ';' || r == '\n' || r == '\r':
			cut()
			wordStart = true
			continue
		case r == '|':
			if i+1 < len(line) && line[i+1] == '|' {
				i++
			}
			cut()
			wordStart = true
			continue
		case r == '&':
			if i+1 < len(line) && line[i+1] == '&' {
				i++
				cut()
				wordStart = true
				continue
			}
			return nil, false
		case wordStart && strings.HasPrefix(line[i:], "2>&1") && endsWord(line, i+len("2>&1")):
			// Standard error joined to output: no file is written.
			i += len("2>&1") - 1
			wordStart = true
			continue
		case strings.IndexByte("<>()$`{}", r) >= 0:
			return nil, false
		case r == ' ' || r == '\t':
			blank = true
		}
		cur.WriteByte(r)
		wordStart = blank && !inSingle && !inDouble
	}
	if inSingle || inDouble {
		return nil, false
	}
	cut()
	for _, c := range cmds {
		if isAssignment(strings.Fields(c)[0]) {
			return nil, false
		}
	}
	return cmds, len(cmds) > 0
}

// endsWord reports whether a word of line ends at i: the line ends or a
// blank or command separator follows.
func endsWord(line string, i int) bool {
	return i == len(line) || strings.IndexByte(" \t;&|\n\r", line[i]) >= 0
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
