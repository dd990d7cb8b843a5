package diffs

import (
	"strings"
	"testing"
)

// TestUndoGivesBackTheOldText: whatever the change, Record then Text gives
// the old content back byte for byte, from hunks alone where they suffice.
func TestUndoGivesBackTheOldText(t *testing.T) {
	long := strings.Repeat("same line\n", 40)
	tests := []struct {
		name, old, new string
		wholeOld       bool // the hunks cannot give it back: the old text is kept
	}{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", false},
		{"lines added at the end", "a\nb\n", "a\nb\nc\nd\n", false},
		{"lines removed", "a\nb\nc\nd\ne\n", "a\ne\n", false},
		{"final newline dropped", "a\nb\n", "a\nb", false},
		{"emptied", "a\nb\n", "", false},
		{"crlf kept", "a\r\nb\r\nc\r\n", "a\r\nX\r\nc\r\n", false},
		{"bom kept", "\uFEFFa\nb\n", "\uFEFFa\nc\n", false},
		{"repeated lines", long + "x\n" + long, long + "y\n" + long, false},
		{"crlf to lf", "a\r\nb\r\n", "a\nb\nc\n", true},
		{"bom dropped", "\uFEFFa\n", "a\nb\n", true},
		{"endings only", "a\r\nb\r\n", "a\nb\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.old
			hunks := Compute("f", &old, tt.new)
			u := Record("f", &Version{old, Hash(old)}, VersionOf(tt.new), hunks)
			if got := u.Old != nil; got != tt.wholeOld {
				t.Errorf("old text kept: %v, want %v", got, tt.wholeOld)
			}
			back, ok := u.Text(tt.new, hunks)
			if !ok || back != tt.old {
				t.Errorf("Text = %q, %v; want %q, true", back, ok, tt.old)
			}
			if u.After != Hash(tt.new) || u.Before != Hash(tt.old) || u.Created {
				t.Errorf("hashes or created wrong: %+v", u)
			}
		})
	}
}

// TestUndoRefusesOtherText: hunks reverted on a text they did not make,
// or on a created file, give nothing.
func TestUndoRefusesOtherText(t *testing.T) {
	old := "a\nb\nc\n"
	hunks := Compute("f", &old, "a\nB\nc\n")
	u := Record("f", &Version{old, Hash(old)}, VersionOf("a\nB\nc\n"), hunks)
	if back, ok := u.Text("a\nB\nc\nmore\n", hunks); ok {
		t.Errorf("reverted a text the change did not leave: %q", back)
	}
	if _, ok := u.Text("something else\n", hunks); ok {
		t.Error("reverted a text without the hunk")
	}
	created := Record("g", nil, VersionOf("new\n"), Compute("g", nil, "new\n"))
	if !created.Created || created.Before != "" {
		t.Errorf("created: %+v", created)
	}
	if _, ok := created.Text("new\n", nil); ok {
		t.Error("a created file has no text before")
	}
}
