package mapping

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOptionName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Always allow `bash`", "Always allow bash"},
		{"Always allow `go test` commands", "Always allow go test commands"},
		{"Always allow edits in this workspace", "Always allow edits in this workspace"},
		{"Always allow `a\n  b`", "Always allow a b"},
		{"Always allow " + strings.Repeat("word ", 20), "Always allow word word word word word word word word word…"},
		{"Always allow " + strings.Repeat("x", 80), "Always allow " + strings.Repeat("x", MaxOptionName-14) + "…"},
	}
	for _, tt := range tests {
		got := OptionName(tt.in)
		if got != tt.want {
			t.Errorf("OptionName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if n := utf8.RuneCountInString(got); n > MaxOptionName {
			t.Errorf("OptionName(%q) has %d runes", tt.in, n)
		}
	}
}
