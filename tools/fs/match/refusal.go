package match

import (
	"fmt"
	"strings"
)

// Bounds of a refusal's message: it goes into the model's context.
const (
	maxShownLines = 30
	maxShownDiffs = 8
	maxLineChars  = 160
)

// maxListed bounds the matches an ambiguity lists by line.
const maxListed = 20

// ambiguous refuses a step that matched more than one place (starts are
// their 0-based first lines, size their length in lines, 0 for an exact
// match inside lines), listing where each starts so the model can name
// one with start_line; at is the start line it named, if any.
func ambiguous(path string, starts []int, size int, how Result, at int) error {
	var places []string
	for i := 0; i < len(starts); {
		if len(places) == maxListed {
			places = append(places, fmt.Sprintf("and %d more", len(starts)-i))
			break
		}
		s, same := starts[i], 1
		for i+same < len(starts) && starts[i+same] == s {
			same++ // matches inside one line
		}
		i += same
		place := fmt.Sprintf("line %d", s+1)
		if size > 1 {
			place = fmt.Sprintf("lines %d-%d", s+1, s+size)
		}
		if same > 1 {
			place += fmt.Sprintf(" (%d times)", same)
		}
		places = append(places, place)
	}
	var b strings.Builder
	switch {
	case how.Tolerance == BlockAnchor && len(starts) == 1:
		fmt.Fprintf(&b, "old_string was not found in %q; its first and last lines are in several places, and the lines between are close to the file's only at %s.", path, places[0])
	case how.Tolerance == BlockAnchor:
		fmt.Fprintf(&b, "old_string was not found in %q; its first and last lines match, with the lines between close to the file's, in %d places (%s).", path, len(starts), strings.Join(places, ", "))
	case how.Tolerant():
		fmt.Fprintf(&b, "old_string was not found exactly in %q; %s, it matches %d places (%s).", path, strings.TrimPrefix(how.Note(), "matched "), len(starts), strings.Join(places, ", "))
	default:
		fmt.Fprintf(&b, "old_string matched %d times in %q, starting at %s.", len(starts), path, strings.Join(places, ", "))
	}
	if at > 0 {
		fmt.Fprintf(&b, " start_line is %d, where not exactly one of them starts.", at)
	}
	b.WriteString(" Set start_line to the line where the one you mean starts, provide a more specific old_string (include more surrounding lines in old_string to pick one), or set replace_all to true")
	return &Refusal{CodeAmbiguous, b.String()}
}

// notFound refuses an edit no step matched, showing the region of the
// file nearest to old_string with its line numbers and what differs.
// near, when not nil, is the block whose first and last lines are old's:
// that is the region shown, with how far its middle is.
func notFound(path string, f *file, old string, near *anchored) error {
	msg := fmt.Sprintf("old_string was not found in %q, not even ignoring whitespace and indentation", path)
	ol, _ := toLines(old)
	if r, _, ok := repair(LineNumbers, old, ""); ok {
		ol, _ = toLines(r) // compare what the model meant, not the prefixes
	}
	s, e, votes := nearest(f, ol)
	if near != nil {
		s, e, votes = near.start, near.start+near.size-1, max(votes, 1)
	}
	if votes == 0 {
		return &Refusal{CodeNotFound, msg + ": no line of it is in the file. Read the file again and copy old_string from it"}
	}
	var b strings.Builder
	b.WriteString(msg)
	fmt.Fprintf(&b, ". The nearest region is lines %d-%d:\n", s+1, e+1)
	for i := s; i <= e; i++ {
		if i-s == maxShownLines {
			fmt.Fprintf(&b, "(%d more lines)\n", e-i+1)
			break
		}
		fmt.Fprintf(&b, "%d: %s\n", i+1, clip(f.text[i]))
	}
	b.WriteString("What differs:\n")
	for _, d := range differences(f, s, e, ol) {
		b.WriteString("- " + d + "\n")
	}
	if near != nil {
		b.WriteString(near.why() + "\n")
	}
	b.WriteString("Copy old_string from the file as it is now (read it again if it may have changed).")
	return &Refusal{CodeNotFound, b.String()}
}

// nearest finds the file region that shares the most lines with old
// (compared as loosely as the last step does): each file line equal to
// old line k votes for a region starting k lines before it. The region
// runs to where old's last line is, when that is near, else as many lines
// as old has.
func nearest(f *file, old []string) (start, end, votes int) {
	lines := f.normalized(Punctuation)
	at := map[string][]int{}
	for k, l := range old {
		if n := normalize(l, Punctuation); n != "" {
			at[n] = append(at[n], k)
		}
	}
	count := map[int]int{}
	for i, l := range lines {
		for _, k := range at[l] {
			if s := i - k; s > -len(old) {
				count[max(s, 0)]++
			}
		}
	}
	start = -1
	for s, c := range count {
		if c > votes || c == votes && s < start {
			start, votes = s, c
		}
	}
	if votes == 0 {
		return 0, 0, 0
	}
	// Anchor on old's first line when it is near the winner: a drifted
	// middle votes for a start shifted by the lines it gained or lost.
	if first := normalize(old[0], Punctuation); first != "" && lines[start] != first {
		for d := 1; d <= 10; d++ {
			if j := start - d; j >= 0 && lines[j] == first {
				start = j
				break
			}
			if j := start + d; j < len(lines) && j < start+len(old) && lines[j] == first {
				start = j
				break
			}
		}
	}
	end = min(start+len(old)-1, len(lines)-1)
	if lastOld := normalize(old[len(old)-1], Punctuation); lastOld != "" && lines[end] != lastOld {
		for d := 1; d <= 10; d++ {
			if j := end + d; j < len(lines) && lines[j] == lastOld {
				end = j
				break
			}
			if j := end - d; j > start && lines[j] == lastOld {
				end = j
				break
			}
		}
	}
	return start, end, votes
}

// differences lists how the file's lines s..e differ from old, aligned
// line by line as loosely as the last step compares.
func differences(f *file, s, e int, old []string) []string {
	got := f.text[s : e+1]
	gn, on := make([]string, len(got)), make([]string, len(old))
	for i, l := range got {
		gn[i] = normalize(l, Punctuation)
	}
	for i, l := range old {
		on[i] = normalize(l, Punctuation)
	}
	keep := align(gn, on) // for each old line, the region line it equals
	var out []string
	add := func(d string) {
		if len(out) < maxShownDiffs {
			out = append(out, d)
		} else if len(out) == maxShownDiffs {
			out = append(out, "(more differences not shown)")
		}
	}
	used := make([]bool, len(got))
	for _, g := range keep {
		if g >= 0 {
			used[g] = true
		}
	}
	nextGot := 0
	for k, g := range keep {
		if g < 0 {
			// An old line no region line equals: set beside the region
			// line at its place when that one is also unmatched.
			if nextGot < len(got) && !used[nextGot] {
				add(fmt.Sprintf("line %d: the file has %q where old_string has %q", s+nextGot+1, clip(got[nextGot]), clip(old[k])))
				used[nextGot] = true
				nextGot++
			} else {
				add(fmt.Sprintf("old_string has %q, which the file does not have here", clip(old[k])))
			}
			continue
		}
		for ; nextGot < g; nextGot++ {
			if !used[nextGot] {
				add(fmt.Sprintf("line %d: the file has %q, which old_string lacks", s+nextGot+1, clip(got[nextGot])))
				used[nextGot] = true
			}
		}
		if got[g] != old[k] {
			add(fmt.Sprintf("line %d differs in whitespace or punctuation only: the file has %q, old_string has %q", s+g+1, clip(got[g]), clip(old[k])))
		}
		nextGot = g + 1
	}
	for ; nextGot < len(got); nextGot++ {
		if !used[nextGot] {
			add(fmt.Sprintf("line %d: the file has %q, which old_string lacks", s+nextGot+1, clip(got[nextGot])))
		}
	}
	if len(out) == 0 {
		out = append(out, "the lines are the same ignoring whitespace; old_string may start or end inside a line")
	}
	return out
}

func clip(l string) string {
	if len(l) <= maxLineChars {
		return l
	}
	cut := maxLineChars
	for cut > 0 && l[cut]&0xC0 == 0x80 {
		cut--
	}
	return l[:cut] + "…"
}
