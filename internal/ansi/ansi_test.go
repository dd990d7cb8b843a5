package ansi

import (
	"testing"
	"unicode/utf8"
)

func TestStrip(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "no escapes\n", "no escapes\n"},
		{"colour", "\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[m", "red and bold green"},
		{"cursor and erase", "50%\x1b[2K\x1b[1G100%\n", "50%100%\n"},
		{"256 colours", "\x1b[38;5;208morange\x1b[39m", "orange"},
		{"private mode", "\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"},
		{"hyperlink keeps its text", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"title ended by BEL", "\x1b]0;title\x07after", "after"},
		{"charset", "\x1b(Bplain", "plain"},
		{"keypad", "\x1b=x", "x"},
		{"8-bit CSI", "\u009b31mred", "red"},
		{"cut at the end", "red\x1b[3", "red"},
		{"lone ESC at the end", "text\x1b", "text"},
		{"utf-8 kept", "\x1b[1mgrüße ✓\x1b[0m", "grüße ✓"},
		{"broken CSI stops at a newline", "\x1b[31\nnext", "\nnext"},
		{"unended OSC before another escape", "\x1b]0;t\x1b[1mx", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Strip(tc.in); got != tc.want {
				t.Errorf("Strip(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{"\x1b[31mred\x1b[0m", "\x1b]8;;u\x1b\\t", "a\x1b", "\u009b1m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Strip(s)
		if len(out) > len(s) {
			t.Fatalf("Strip grew %q to %q", s, out)
		}
		// Removing a sequence never joins the bytes around it into a new
		// one, in text that is valid UTF-8 (command output that is not is
		// made valid before it is shown).
		if utf8.ValidString(s) && Strip(out) != out {
			t.Fatalf("Strip is not idempotent on %q: %q then %q", s, out, Strip(out))
		}
	})
}
