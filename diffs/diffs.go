// Package diffs computes the hunks a file change actually applied, for diff
// cards. Tools call it at execution time and store the hunks in their result,
// so the mapping (and a replay) needs no I/O. It is a leaf: it imports only
// registry (for FileDiff) and github.com/sergi/go-diff.
package diffs

import (
	"sort"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/acp-bridge/acp-bridge/registry"
)

const (
	// Context is the number of unchanged lines shown around a change.
	Context = 3
	// MergeGap: changes separated by at most this many unchanged lines share a hunk.
	MergeGap = 2 * Context
	// MaxDiffSize: above this many bytes (old+new) the whole file is shown instead.
	MaxDiffSize = 10 << 20
)

// Compute returns the hunks that turn old into new. old == nil means a new
// file: one diff with a nil OldText and the whole content.
func Compute(path string, old *string, new string) []registry.FileDiff {
	if old == nil {
		return []registry.FileDiff{{Path: path, OldText: nil, NewText: new}}
	}
	if *old == new {
		return nil
	}
	if len(*old)+len(new) > MaxDiffSize {
		o := *old
		return []registry.FileDiff{{Path: path, OldText: &o, NewText: new}}
	}
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(*old, new)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	// Walk the line diff, recording changed line ranges in old and new.
	var changes []change
	oi, ni := 0, 0
	for _, d := range diffs {
		n := strings.Count(d.Text, "\n")
		if !strings.HasSuffix(d.Text, "\n") {
			n++
		}
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			oi += n
			ni += n
		case diffmatchpatch.DiffDelete:
			changes = append(changes, change{oldStart: oi, oldEnd: oi + n, newStart: ni, newEnd: ni})
			oi += n
		case diffmatchpatch.DiffInsert:
			changes = append(changes, change{oldStart: oi, oldEnd: oi, newStart: ni, newEnd: ni + n})
			ni += n
		}
	}
	return hunks(path, splitLines(*old), splitLines(new), changes)
}

// Edit is one known replacement: old[Start:End] became New (byte offsets).
type Edit struct {
	Start, End int
	New        string
}

// FromEdits returns the hunks of known replacements without diffing the
// whole file: only the lines around each edit are looked at.
func FromEdits(path, old string, edits []Edit) []registry.FileDiff {
	if len(edits) == 0 {
		return nil
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	var b strings.Builder
	var changes []change
	prev, shift := 0, 0
	for _, e := range edits {
		b.WriteString(old[prev:e.Start])
		b.WriteString(e.New)
		prev = e.End
		oStart := strings.Count(old[:e.Start], "\n")
		oEnd := oStart + strings.Count(old[e.Start:e.End], "\n") + 1
		nStart := oStart + shift
		nEnd := nStart + strings.Count(e.New, "\n") + 1 + strings.Count(old[lineStart(old, e.Start):e.Start], "\n")
		changes = append(changes, change{oldStart: oStart, oldEnd: oEnd, newStart: nStart, newEnd: nEnd})
		shift += strings.Count(e.New, "\n") - strings.Count(old[e.Start:e.End], "\n")
	}
	b.WriteString(old[prev:])
	return hunks(path, splitLines(old), splitLines(b.String()), changes)
}

func lineStart(s string, i int) int { return strings.LastIndexByte(s[:i], '\n') + 1 }

type change struct{ oldStart, oldEnd, newStart, newEnd int }

// splitLines splits keeping each line's terminator, so joining is exact.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, "\n")
}

// hunks groups changes (line ranges, ascending) into hunks with context.
func hunks(path string, oldLines, newLines []string, changes []change) []registry.FileDiff {
	var out []registry.FileDiff
	for i := 0; i < len(changes); {
		j := i
		for j+1 < len(changes) && changes[j+1].oldStart-changes[j].oldEnd <= MergeGap {
			j++
		}
		first, last := changes[i], changes[j]
		ctxBefore := min(Context, first.oldStart, first.newStart)
		os, ns := first.oldStart-ctxBefore, first.newStart-ctxBefore
		ctxAfter := min(Context, len(oldLines)-last.oldEnd, len(newLines)-last.newEnd)
		oe, ne := last.oldEnd+ctxAfter, last.newEnd+ctxAfter
		o := strings.Join(oldLines[clamp(os, len(oldLines)):clamp(oe, len(oldLines))], "")
		n := strings.Join(newLines[clamp(ns, len(newLines)):clamp(ne, len(newLines))], "")
		out = append(out, registry.FileDiff{Path: path, OldText: &o, NewText: n})
		i = j + 1
	}
	return out
}

func clamp(i, n int) int { return max(0, min(i, n)) }
