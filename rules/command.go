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

// plainCommands cuts a command line into its commands when it is only
// plain commands joined by ;, &&, || and | (ok true): no substitution,
// redirection (other than 2>&1), background job, subshell, backslash or
// leading NAME=value, whose effects no prefix rule can vouch for.
func plainCommands(line string) (cmds []string, ok bool) {
	line = strings.ReplaceAll(line, "2>&1", "")
	var cur strings.Builder
	inSingle, inDouble := false, false
	cut := func() {
		if c := collapse(cur.String()); c != "" {
			cmds = append(cmds, c)
		}
		cur.Reset()
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
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
			continue
		case r == '|':
			if i+1 < len(rs) && rs[i+1] == '|' {
				i++
			}
			cut()
			continue
		case r == '&':
			if i+1 < len(rs) && rs[i+1] == '&' {
				i++
				cut()
				continue
			}
			return nil, false
		case strings.ContainsRune("<>()$`{}", r):
			return nil, false
		}
		cur.WriteRune(r)
	}
	if inSingle || inDouble {
		return nil, false
	}
	cut()
	for _, c := range cmds {
		if name, _, has := strings.Cut(strings.Fields(c)[0], "="); has && name != "" {
			return nil, false
		}
	}
	return cmds, len(cmds) > 0
}
