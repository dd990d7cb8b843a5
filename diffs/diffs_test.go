package diffs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/google/go-cmp/cmp"
)

// d is a wire hunk for tables: old "<nil>" stands for a nil OldText.
type d struct{ old, new string }

const nilText = "<nil>"

func got(fds []registry.FileDiff) []d {
	var out []d
	for _, f := range fds {
		o := nilText
		if f.OldText != nil {
			o = *f.OldText
		}
		out = append(out, d{o, f.NewText})
	}
	return out
}

func ptr(s string) *string { return &s }

// numbered returns lines "1\n".."n\n".
func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%d\n", i+1)
	}
	return out
}

// with returns lines with the given 1-based lines replaced.
func with(lines []string, repl map[int]string) string {
	out := append([]string(nil), lines...)
	for k, v := range repl {
		out[k-1] = v
	}
	return strings.Join(out, "")
}

func TestCompute(t *testing.T) {
	twenty := numbered(20)
	base := strings.Join(twenty, "")
	big := strings.Repeat("x", MaxDiffSize) + "\n"
	tests := []struct {
		name     string
		old      *string
		new      string
		want     []d
		wantPath string
	}{
		{name: "new file", old: nil, new: "a\nb\n", want: []d{{nilText, "a\nb\n"}}},
		{name: "new file with CRLF and BOM is shown normalized", old: nil, new: "\uFEFFa\r\nb\r\n", want: []d{{nilText, "a\nb\n"}}},
		{name: "content into an empty file", old: ptr(""), new: "brand new\n", want: []d{{nilText, "brand new\n"}}},
		{name: "identical", old: ptr(base), new: base, want: nil},
		{name: "one line in the middle, 3 lines of context", old: ptr(base), new: with(twenty, map[int]string{10: "ten\n"}),
			want: []d{{"7\n8\n9\n10\n11\n12\n13\n", "7\n8\n9\nten\n11\n12\n13\n"}}},
		{name: "first line: context after only", old: ptr(base), new: with(twenty, map[int]string{1: "one\n"}),
			want: []d{{"1\n2\n3\n4\n", "one\n2\n3\n4\n"}}},
		{name: "last line: context before only", old: ptr(base), new: with(twenty, map[int]string{20: "twenty\n"}),
			want: []d{{"17\n18\n19\n20\n", "17\n18\n19\ntwenty\n"}}},
		{name: "6 unchanged lines apart: one hunk", old: ptr(base), new: with(twenty, map[int]string{5: "five\n", 12: "twelve\n"}),
			want: []d{{"2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\ntwelve\n13\n14\n15\n"}}},
		{name: "7 unchanged lines apart: two hunks", old: ptr(base), new: with(twenty, map[int]string{5: "five\n", 13: "thirteen\n"}),
			want: []d{{"2\n3\n4\n5\n6\n7\n8\n", "2\n3\n4\nfive\n6\n7\n8\n"}, {"10\n11\n12\n13\n14\n15\n16\n", "10\n11\n12\nthirteen\n14\n15\n16\n"}}},
		{name: "inserted lines", old: ptr("a\nb\nc\n"), new: "a\nb\nx\ny\nc\n", want: []d{{"a\nb\nc\n", "a\nb\nx\ny\nc\n"}}},
		{name: "deleted everything", old: ptr("a\nb\n"), new: "", want: []d{{"a\nb\n", ""}}},
		{name: "final newline added is a visible difference", old: ptr("a\nb"), new: "a\nb\n", want: []d{{"a\nb", "a\nb\n"}}},
		{name: "final newline removed is a visible difference", old: ptr("a\nb\n"), new: "a\nb", want: []d{{"a\nb\n", "a\nb"}}},
		{name: "CRLF rewritten as LF: no hunk", old: ptr("a\r\nb\r\nc\r\n"), new: "a\nb\nc\n", want: nil},
		{name: "CRLF file, one line changed: only that line", old: ptr(strings.ReplaceAll(base, "\n", "\r\n")),
			new:  strings.ReplaceAll(with(twenty, map[int]string{10: "ten\n"}), "\n", "\r\n"),
			want: []d{{"7\n8\n9\n10\n11\n12\n13\n", "7\n8\n9\nten\n11\n12\n13\n"}}},
		{name: "CRLF old, LF new with a change: only the change", old: ptr(strings.ReplaceAll(base, "\n", "\r\n")),
			new:  with(twenty, map[int]string{10: "ten\n"}),
			want: []d{{"7\n8\n9\n10\n11\n12\n13\n", "7\n8\n9\nten\n11\n12\n13\n"}}},
		{name: "BOM removed: no hunk", old: ptr("\uFEFFa\nb\n"), new: "a\nb\n", want: nil},
		{name: "BOM kept, first line changed", old: ptr("\uFEFFa\nb\n"), new: "\uFEFFA\nb\n", want: []d{{"a\nb\n", "A\nb\n"}}},
		{name: "a lone CR is content", old: ptr("a\rb\n"), new: "a\nb\n", want: []d{{"a\rb\n", "a\nb\n"}}},
		{name: "above the size bound: whole file", old: ptr(big), new: big + "y\n", want: []d{{big, big + "y\n"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fds := Compute("/w/f.txt", tt.old, tt.new)
			if g := got(fds); cmp.Diff(g, tt.want, cmp.AllowUnexported(d{})) != "" {
				t.Errorf("Compute:\n got %q\nwant %q", g, tt.want)
			}
			for _, f := range fds {
				if f.Path != "/w/f.txt" {
					t.Errorf("path %q, want /w/f.txt", f.Path)
				}
			}
		})
	}
}

func TestFromEdits(t *testing.T) {
	twenty := numbered(20)
	base := strings.Join(twenty, "")
	at := func(s, sub string) int {
		i := strings.Index(s, sub)
		if i < 0 {
			t.Fatalf("%q not in text", sub)
		}
		return i
	}
	tests := []struct {
		name  string
		old   string
		edits []Edit
		want  []d
	}{
		{name: "one word in a line", old: base, edits: []Edit{{at(base, "\n10\n") + 1, at(base, "\n10\n") + 3, "ten"}},
			want: []d{{"7\n8\n9\n10\n11\n12\n13\n", "7\n8\n9\nten\n11\n12\n13\n"}}},
		{name: "two edits 6 lines apart share a hunk, unsorted input", old: base,
			edits: []Edit{{at(base, "\n12\n") + 1, at(base, "\n12\n") + 3, "twelve"}, {at(base, "\n5\n") + 1, at(base, "\n5\n") + 2, "five"}},
			want:  []d{{"2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\ntwelve\n13\n14\n15\n"}}},
		{name: "two edits 7 lines apart: two hunks", old: base,
			edits: []Edit{{at(base, "\n5\n") + 1, at(base, "\n5\n") + 2, "five"}, {at(base, "\n13\n") + 1, at(base, "\n13\n") + 3, "thirteen"}},
			want:  []d{{"2\n3\n4\n5\n6\n7\n8\n", "2\n3\n4\nfive\n6\n7\n8\n"}, {"10\n11\n12\n13\n14\n15\n16\n", "10\n11\n12\nthirteen\n14\n15\n16\n"}}},
		{name: "two edits in one line", old: "a b c\nd\n", edits: []Edit{{0, 1, "A"}, {4, 5, "C"}}, want: []d{{"a b c\nd\n", "A b C\nd\n"}}},
		{name: "an edit that adds lines", old: base, edits: []Edit{{at(base, "\n10\n") + 1, at(base, "\n10\n") + 3, "10a\n10b"}},
			want: []d{{"7\n8\n9\n10\n11\n12\n13\n", "7\n8\n9\n10a\n10b\n11\n12\n13\n"}}},
		{name: "an edit that joins lines", old: base, edits: []Edit{{at(base, "\n10\n") + 3, at(base, "\n10\n") + 4, " "}},
			want: []d{{"7\n8\n9\n10\n11\n12\n13\n14\n", "7\n8\n9\n10 11\n12\n13\n14\n"}}},
		{name: "delete a whole line", old: base, edits: []Edit{{at(base, "\n10\n") + 1, at(base, "\n10\n") + 4, ""}},
			want: []d{{"7\n8\n9\n10\n11\n12\n13\n", "7\n8\n9\n11\n12\n13\n"}}},
		{name: "insert a whole line at a line start", old: base, edits: []Edit{{at(base, "\n10\n") + 1, at(base, "\n10\n") + 1, "new\n"}},
			want: []d{{"7\n8\n9\n10\n11\n12\n", "7\n8\n9\nnew\n10\n11\n12\n"}}},
		{name: "old_string with anchoring lines: only the changed line counts", old: base,
			edits: []Edit{{at(base, "\n9\n") + 1, at(base, "\n12\n"), "9\nten\n11"}},
			want:  []d{{"7\n8\n9\n10\n11\n12\n13\n", "7\n8\n9\nten\n11\n12\n13\n"}}},
		{name: "edit at the start", old: base, edits: []Edit{{0, 1, "one"}}, want: []d{{"1\n2\n3\n4\n", "one\n2\n3\n4\n"}}},
		{name: "append at the end", old: "a\nb\n", edits: []Edit{{4, 4, "c\n"}}, want: []d{{"a\nb\n", "a\nb\nc\n"}}},
		{name: "final newline added", old: "a\nb", edits: []Edit{{3, 3, "\n"}}, want: []d{{"a\nb", "a\nb\n"}}},
		{name: "final newline removed", old: "a\nb\n", edits: []Edit{{3, 4, ""}}, want: []d{{"a\nb\n", "a\nb"}}},
		{name: "into an empty file", old: "", edits: []Edit{{0, 0, "x\n"}}, want: []d{{nilText, "x\n"}}},
		{name: "CRLF file: texts normalized", old: "a\r\nb\r\nc\r\n", edits: []Edit{{3, 4, "B"}}, want: []d{{"a\nb\nc\n", "a\nB\nc\n"}}},
		{name: "CRLF to LF only: no hunk", old: "a\r\nb\r\n", edits: []Edit{{1, 2, ""}}, want: nil},
		{name: "BOM file, first line: BOM not shown", old: "\uFEFFa\nb\n", edits: []Edit{{3, 4, "A"}}, want: []d{{"a\nb\n", "A\nb\n"}}},
		{name: "no-op edit", old: base, edits: []Edit{{2, 3, "2"}}, want: nil},
		{name: "no edits", old: base, edits: nil, want: nil},
		{name: "overlapping edits: none", old: base, edits: []Edit{{0, 4, "x"}, {2, 5, "y"}}, want: nil},
		{name: "out of range: none", old: "abc", edits: []Edit{{2, 9, "x"}}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if g := got(FromEdits("/w/f.txt", tt.old, tt.edits)); cmp.Diff(g, tt.want, cmp.AllowUnexported(d{})) != "" {
				t.Errorf("FromEdits:\n got %q\nwant %q", g, tt.want)
			}
			// Where the edits are valid, the whole-file diff agrees on
			// these inputs (their lines are distinct, so the alignment is unique).
			if n, err := Apply(tt.old, tt.edits); err == nil {
				if c := got(Compute("/w/f.txt", &tt.old, n)); cmp.Diff(c, tt.want, cmp.AllowUnexported(d{})) != "" && tt.old != "" {
					t.Errorf("Compute disagrees:\n got %q\nwant %q", c, tt.want)
				}
			}
		})
	}
}

func TestFromEditsLeavesInputAlone(t *testing.T) {
	edits := []Edit{{4, 5, "x"}, {0, 1, "y"}}
	FromEdits("/p", "a\nb\nc\n", edits)
	if edits[0].Start != 4 {
		t.Errorf("FromEdits reordered the caller's slice: %v", edits)
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		old     string
		edits   []Edit
		want    string
		wantErr bool
	}{
		{"abc", []Edit{{1, 2, "B"}}, "aBc", false},
		{"abc", []Edit{{2, 3, "C"}, {0, 1, "A"}}, "AbC", false},
		{"abc", []Edit{{1, 1, "x"}, {1, 1, "y"}}, "axybc", false},
		{"abc", []Edit{{1, 2, "B"}, {1, 1, "x"}}, "axBc", false},
		{"abc", []Edit{{0, 2, ""}, {1, 3, ""}}, "", true},
		{"abc", []Edit{{-1, 0, ""}}, "", true},
		{"abc", []Edit{{2, 1, ""}}, "", true},
		{"abc", []Edit{{3, 4, ""}}, "", true},
	}
	for _, tt := range tests {
		got, err := Apply(tt.old, tt.edits)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Apply(%q, %v) = %q, %v; want %q, error %v", tt.old, tt.edits, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestLineRunesSkipSurrogates(t *testing.T) {
	// Enough distinct lines to cross the surrogate range: every rune must
	// survive a round trip through a string, or go-diff would merge lines.
	lines := make([]string, surrogateMin+10)
	for i := range lines {
		lines[i] = fmt.Sprintf("%d\n", i)
	}
	ra, _, ok := lineRunes(lines, nil)
	if !ok {
		t.Fatal("lineRunes refused")
	}
	seen := map[rune]bool{}
	for _, r := range string(ra) {
		if seen[r] {
			t.Fatalf("rune %U used twice after a string round trip", r)
		}
		seen[r] = true
	}
	old := strings.Join(lines, "")
	n := strings.Replace(old, "\n55299\n", "\nchanged\n", 1) // a line whose rune sits next to the surrogates
	if g := got(Compute("/p", &old, n)); len(g) != 1 || !strings.Contains(g[0].new, "changed") || strings.Count(g[0].old, "\n") != 7 {
		t.Errorf("Compute around the surrogate range: %q", g)
	}
}
