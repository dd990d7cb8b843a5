package match

import (
	"strings"
	"testing"
)

// FuzzFind: whatever the file, old_string and new_string, an edit changes
// nothing outside the region it matched. Checked for every success:
// the edits are in bounds, ascending and apart; the file keeps every byte
// before the first and after the last; each region holds what old_string
// (repaired as the result says) matches at the result's tolerance, as
// whole lines for a tolerant match; and nothing stricter would have
// matched instead.
func FuzzFind(f *testing.F) {
	seeds := [][3]string{
		{"a\nb\nc\n", "b", "B"},
		{"  if x {\n    y()\n  }\n", "if x {\ny()\n}", "if x {\nz()\n}"},
		{"a  \r\nb\r\n", "a\nb", "c"},
		{"\uFEFFx\n\ty\n", "  y", "  z\n  w"},
		{"1\u20132 \u201cq\u201d\n", "1-2 \"q\"", "1-3 \"r\""},
		{"a\nb\na\nb\n", "1: a\n2: b", "c"},
		{"s = \"x\"\n", "s = \\\"x\\\"", "s = \\\"y\\\""},
		{"x\n\ny\n", "\n\ny", "\n\nz"},
		{"a\n", "a\n", ""},
		{"", "a", "b"},
		{"f() {\n  x := load(1)\n}\n", "f() {\n  x := load(2)\n}", "f() {\n  x := load(2)\n  use(x)\n}"},
		{"a {\n  b()\n  c()\n}\n", "a {\nb()\nd()\nc()\n}", "a {\nb()\nc()\n}"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], false)
	}
	f.Add("x x x\n", "x", "y", true)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		if old == "" || len(content) > 1<<12 || len(old) > 1<<10 || len(new) > 1<<10 {
			return
		}
		r, err := Find("f", content, old, new, all)
		if err != nil {
			if _, ok := err.(*Refusal); !ok {
				t.Fatalf("error %T %v, want *Refusal", err, err)
			}
			return
		}
		if len(r.Edits) == 0 || len(r.Edits) > 1 && !all {
			t.Fatalf("%d edits (all=%v)", len(r.Edits), all)
		}
		prev := 0
		for _, e := range r.Edits {
			if e.Start < prev || e.End < e.Start || e.End > len(content) {
				t.Fatalf("edit [%d,%d) out of order or bounds (prev end %d, len %d)", e.Start, e.End, prev, len(content))
			}
			prev = e.End
		}
		got := Apply(content, r.Edits)
		first, last := r.Edits[0], r.Edits[len(r.Edits)-1]
		if !strings.HasPrefix(got, content[:first.Start]) || !strings.HasSuffix(got, content[last.End:]) {
			t.Fatalf("text outside the regions changed:\ncontent %q\ngot     %q", content, got)
		}
		o, _, ok := repair(r.Repair, old, new)
		if !ok {
			t.Fatalf("result names repair %d, which does not apply", r.Repair)
		}
		ol, ot := toLines(o)
		for _, e := range r.Edits {
			region := content[e.Start:e.End]
			if r.Tolerance == Exact {
				if region != withEnding(o, "\n") && region != withEnding(o, "\r\n") && region != o {
					t.Fatalf("exact region %q is not old_string %q", region, o)
				}
				continue
			}
			if r.Inline {
				if len(ol) != 1 || normalize(region, r.Tolerance) != normalize(o, r.Tolerance) || strings.Contains(region, "\n") {
					t.Fatalf("inline region %q does not match %q at tolerance %d", region, o, r.Tolerance)
				}
				continue
			}
			// A tolerant region is whole lines: it starts a line and ends
			// one (or the file).
			if e.Start > 0 && content[e.Start-1] != '\n' && !(e.Start == len("\uFEFF") && strings.HasPrefix(content, "\uFEFF")) {
				t.Fatalf("tolerant region starts inside a line at %d: %q", e.Start, content)
			}
			// Its lines: a trailing break belongs to the last line only
			// when old_string ended with one.
			body := strings.ReplaceAll(region, "\r\n", "\n")
			if ot {
				body = strings.TrimSuffix(body, "\n")
			}
			body = strings.TrimPrefix(body, "\uFEFF")
			rl := strings.Split(body, "\n")
			if len(rl) != len(ol) {
				t.Fatalf("region %q has %d lines, old_string %d", region, len(rl), len(ol))
			}
			if r.Tolerance == BlockAnchor {
				// First and last lines ignoring indentation; the lines
				// between close.
				a := &anchored{}
				a.measure(ol[1:len(ol)-1], rl[1:len(rl)-1])
				if normalize(rl[0], Indentation) != normalize(ol[0], Indentation) || normalize(rl[len(rl)-1], Indentation) != normalize(ol[len(ol)-1], Indentation) || !a.close() {
					t.Fatalf("block region %q is not anchored on %q with a close middle (%+v)", region, o, a)
				}
				continue
			}
			for i := range rl {
				if normalize(rl[i], r.Tolerance) != normalize(ol[i], r.Tolerance) {
					t.Fatalf("region line %q does not match %q at tolerance %d", rl[i], ol[i], r.Tolerance)
				}
			}
		}
		if r.Tolerant() && r.Repair == NoRepair {
			for _, eol := range []string{"\n", "\r\n"} {
				if strings.Contains(content, withEnding(old, eol)) {
					t.Fatalf("tolerant match (%s) where old_string is in the file", r.Note())
				}
			}
		}
	})
}
