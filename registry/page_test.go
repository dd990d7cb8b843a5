package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// PageLines cuts the windows of read and web_fetch: the cases are its
// bounds (lines, bytes, the first line always whole) and the offsets it
// refuses.
func TestPageLines(t *testing.T) {
	lines := []string{"aa", "bb", "cc", "dd", "ee"}
	entry := func(i int) string { return lines[i] + "\n" }
	tests := []struct {
		name                      string
		total, offset, max, bytes int
		want                      Window
		next                      int
		refused                   bool
	}{
		{name: "all", total: 5, offset: 1, max: 10, bytes: 100, want: Window{Text: "aa\nbb\ncc\ndd\nee\n", First: 1, Last: 5, Total: 5}},
		{name: "offset 0 is the first line", total: 5, offset: 0, max: 2, bytes: 100, want: Window{Text: "aa\nbb\n", First: 1, Last: 2, Total: 5}, next: 3},
		{name: "from the middle", total: 5, offset: 4, max: 10, bytes: 100, want: Window{Text: "dd\nee\n", First: 4, Last: 5, Total: 5}},
		{name: "the byte bound", total: 5, offset: 2, max: 10, bytes: 7, want: Window{Text: "bb\ncc\n", First: 2, Last: 3, Total: 5, Capped: true}, next: 4},
		{name: "the first line whole past the byte bound", total: 5, offset: 1, max: 10, bytes: 1, want: Window{Text: "aa\n", First: 1, Last: 1, Total: 5, Capped: true}, next: 2},
		{name: "the line bound is not capped", total: 5, offset: 1, max: 3, bytes: 9, want: Window{Text: "aa\nbb\ncc\n", First: 1, Last: 3, Total: 5}, next: 4},
		{name: "no lines", total: 0, offset: 1, max: 10, bytes: 100, want: Window{First: 1, Last: 0}},
		{name: "no lines, offset 2", total: 0, offset: 2, max: 10, bytes: 100, refused: true},
		{name: "past the end", total: 5, offset: 6, max: 10, bytes: 100, refused: true},
	}
	for _, tt := range tests {
		w, ok := PageLines(tt.total, tt.offset, tt.max, tt.bytes, entry)
		if ok == tt.refused {
			t.Errorf("%s: ok %v", tt.name, ok)
			continue
		}
		if diff := cmp.Diff(tt.want, w); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if w.Next() != tt.next {
			t.Errorf("%s: Next %d, want %d", tt.name, w.Next(), tt.next)
		}
	}
	if got, want := ShowingLines(1, 2000, 5000), "Showing lines 1-2000 of 5000. Use offset=2001 to continue."; got != want {
		t.Errorf("ShowingLines = %q, want %q", got, want)
	}
}

func TestContentSection(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"<path>p</path>\n<content>\n1: a\n\n(End)\n</content>", "1: a\n\n(End)\n"},
		{"<url>u</url>\n<content>\nx\n</content>\n(Showing lines 1-1 of 2.)", "x\n"},
		{"u redirects to v", "u redirects to v"},
		{"no section </content> here", "no section </content> here"},
	} {
		if got := ContentSection(tt.in); got != tt.want {
			t.Errorf("ContentSection(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
