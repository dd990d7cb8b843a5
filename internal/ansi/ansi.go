// Package ansi removes terminal control sequences from command output.
//
// A client that renders a terminal (Zed's terminal_output) shows colours
// and wants them; a client that shows output as text would print them raw
// ("^[[31mred^[[0m"), and a model reads them as noise. Strip is for those
// two.
package ansi

import "strings"

const esc = 0x1b

// Strip returns s without its ANSI escape sequences: CSI (ESC [ … final
// byte, colours and cursor moves), OSC (ESC ] … BEL or ESC \, titles and
// hyperlinks, whose visible text stays), the other string sequences (DCS,
// SOS, PM, APC) and two-byte escapes; the 8-bit CSI (U+009B) too. A
// sequence cut off at the end of s is dropped: the rest of it is in the
// output that follows, which is stripped as a whole next time.
func Strip(s string) string {
	if strings.IndexByte(s, esc) < 0 && !strings.Contains(s, "\u009b") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		switch {
		case s[i] == esc:
			i = skipEscape(s, i+1)
		case strings.HasPrefix(s[i:], "\u009b"):
			i = skipCSI(s, i+len("\u009b"))
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// skipEscape skips the sequence whose ESC is at i-1; it returns the index
// after it.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// ESC with intermediate bytes (0x20–0x2f), then one final byte:
	// charset selections like ESC ( B, or a bare ESC x.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) {
		i++
	}
	return i
}

// skipCSI skips parameter and intermediate bytes up to the final byte
// (0x40–0x7e).
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		i++
		if c >= 0x40 && c <= 0x7e {
			break
		}
		if c < 0x20 && c != esc { // a control byte ends a broken sequence
			return i - 1
		}
	}
	return i
}

// skipString skips a string sequence up to BEL or ST (ESC \).
func skipString(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case 0x07:
			return i + 1
		case esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i // a new sequence: the string was never ended
		}
		i++
	}
	return i
}
