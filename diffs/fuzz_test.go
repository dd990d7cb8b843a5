package diffs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkHunks asserts what every hunk list must satisfy against base (the
// text the hunks apply to) and want (the text they must produce).
func checkHunks(t *testing.T, base, want string, hs []hunk) {
	t.Helper()
	if got := apply(base, hs); got != want {
		t.Fatalf("applying the hunks gives\n%q\nwant\n%q\nhunks %+v", got, want, hs)
	}
	prevEnd := -1
	for i, h := range hs {
		end := h.Off + len(h.Old)
		if base[h.Off:end] != h.Old {
			t.Fatalf("hunk %d: Old is not the text at its offset", i)
		}
		if h.Old == h.New {
			t.Fatalf("hunk %d looks empty: both sides %q", i, h.Old)
		}
		if h.Off > 0 && base[h.Off-1] != '\n' || end < len(base) && end > 0 && base[end-1] != '\n' {
			t.Fatalf("hunk %d [%d,%d) does not cover whole lines", i, h.Off, end)
		}
		if h.New != "" && end < len(base) && !strings.HasSuffix(h.New, "\n") {
			t.Fatalf("hunk %d: New %q does not end a line, yet text follows", i, h.New)
		}
		// Hunks never touch: at least one unchanged line lies between two
		// (a gap of 7+ lines minus 3 lines of context on each side).
		if prevEnd >= 0 && h.Off <= prevEnd {
			t.Fatalf("hunk %d starts at %d, not after the previous one (ends %d)", i, h.Off, prevEnd)
		}
		prevEnd = end
	}
}

func FuzzCompute(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""},
		{"", "a\n"},
		{"a\nb", "a\nb\n"},
		{"a\nb\n", "a\nb"},
		{"a\r\nb\r\n", "a\nb\n"},
		{"\uFEFFa\nb\n", "a\nc\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "1\n2\n3\n4\nV\n6\n7\n8\n9\n10\n11\n12\nD\n14\n15\n"},
		{"x\nx\nx\nx\n", "x\nx\ny\nx\nx\nx\n"},
		{"a\rb\r\n", "a\r\nb\r"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, old, new string) {
		a, b := normalize(old), normalize(new)
		hs := computeHunks(a, b)
		checkHunks(t, a, b, hs)
		// The wire form is the same hunks, minus offsets.
		fds := Compute("/p", &old, new)
		if len(fds) != len(hs) {
			t.Fatalf("Compute gave %d diffs for %d hunks", len(fds), len(hs))
		}
		for i, fd := range fds {
			o := ""
			if fd.OldText != nil {
				o = *fd.OldText
				if o == "" {
					t.Fatalf("diff %d: empty OldText must be nil", i)
				}
			}
			if o != hs[i].Old || fd.NewText != hs[i].New {
				t.Fatalf("diff %d differs from its hunk", i)
			}
		}
	})
}

func FuzzFromEdits(f *testing.F) {
	f.Add("a\nb\nc\n", uint16(2), uint16(1), "B", uint16(0), uint16(0), "")
	f.Add("a\nb", uint16(3), uint16(0), "\n", uint16(0), uint16(0), "z")
	f.Add("a\r\nb\r\nc\r\n", uint16(3), uint16(1), "x\r\ny", uint16(6), uint16(2), "")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", uint16(2), uint16(2), "", uint16(20), uint16(3), "eleven\n")
	f.Add("", uint16(0), uint16(0), "new\n", uint16(0), uint16(0), "")
	f.Add("\uFEFFa\nb\n", uint16(0), uint16(4), "", uint16(5), uint16(1), "c")
	f.Fuzz(func(t *testing.T, old string, s1, n1 uint16, new1 string, s2, n2 uint16, new2 string) {
		// Two edits at fuzzed places, clamped into the text and kept apart.
		at := func(s, n uint16, from int) Edit {
			start := from + int(s)%(len(old)-from+1)
			end := start + int(n)%(len(old)-start+1)
			return Edit{Start: start, End: end}
		}
		e1 := at(s1, n1, 0)
		e1.New = new1
		e2 := at(s2, n2, e1.End)
		e2.New = new2
		edits := []Edit{e2, e1}
		want, err := Apply(old, edits)
		if err != nil {
			t.Fatalf("Apply refused edits it should take: %v", err)
		}
		hs, err := editHunks(old, edits)
		if err != nil {
			t.Fatal(err)
		}
		checkHunks(t, old, want, hs)
		// The wire form: normalized pieces, and exactly the hunks whose
		// normalized sides still differ.
		fds := FromEdits("/p", old, edits)
		var kept []hunk
		for _, h := range hs {
			o, n := normalizeAt(h.Old, h.Off == 0), normalizeAt(h.New, h.Off == 0)
			if o != n {
				kept = append(kept, hunk{Old: o, New: n})
			}
		}
		if len(fds) != len(kept) {
			t.Fatalf("FromEdits gave %d diffs, want %d", len(fds), len(kept))
		}
		for i, fd := range fds {
			o := ""
			if fd.OldText != nil {
				o = *fd.OldText
			}
			if o != kept[i].Old || fd.NewText != kept[i].New {
				t.Fatalf("diff %d: got %q→%q want %q→%q", i, o, fd.NewText, kept[i].Old, kept[i].New)
			}
		}
	})
}

// TestComputeRandomEdits runs the fuzz invariant over generated files long
// enough to have anchors (16+ equal lines): lines drawn from a small set so
// they repeat, and a few insertions, deletions and replacements each.
func TestComputeRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	vocab := []string{"{\n", "}\n", "\n", "return nil\n", "x := 1\n", "if err != nil {\n", "a\n", "b\n"}
	for iter := range 3000 {
		n := 20 + rng.IntN(300)
		lines := make([]string, n)
		for i := range lines {
			if rng.IntN(3) == 0 {
				lines[i] = vocab[rng.IntN(len(vocab))]
			} else {
				lines[i] = fmt.Sprintf("line %d\n", rng.IntN(n))
			}
		}
		edited := slices.Clone(lines)
		for range 1 + rng.IntN(6) {
			i := rng.IntN(len(edited) + 1)
			switch rng.IntN(3) {
			case 0:
				edited = slices.Insert(edited, i, vocab[rng.IntN(len(vocab))])
			case 1:
				if i < len(edited) {
					edited = slices.Delete(edited, i, i+1)
				}
			default:
				if i < len(edited) {
					edited[i] = "changed\n"
				}
			}
		}
		a, b := strings.Join(lines, ""), strings.Join(edited, "")
		if iter%7 == 0 {
			b = strings.TrimSuffix(b, "\n")
		}
		t.Run("", func(t *testing.T) { checkHunks(t, a, b, computeHunks(a, b)) })
		if t.Failed() {
			return
		}
	}
}
