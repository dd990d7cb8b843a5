package mapping

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/acp"
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

func TestZeroBasedLines(t *testing.T) {
	tests := []struct {
		info *acp.Implementation
		want bool
	}{
		{nil, false},
		{&acp.Implementation{Name: "zed", Version: "0.300.0", Title: "Zed Preview"}, true},
		{&acp.Implementation{Name: "Zed"}, true},
		{&acp.Implementation{Name: "zed-like-editor"}, false},
		{&acp.Implementation{Name: "neovim"}, false},
	}
	for _, tt := range tests {
		if got := ZeroBasedLines(tt.info); got != tt.want {
			t.Errorf("ZeroBasedLines(%+v) = %v, want %v", tt.info, got, tt.want)
		}
	}
}
