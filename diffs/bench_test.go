//go:build unix

package diffs

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchInput is a 100,000-line file (about 6 MB) and 10 one-line edits
// spread through it: the case of the figure.
func benchInput() (old, new string, edits []Edit) {
	var b strings.Builder
	starts := make([]int, 0, 100_000)
	for i := range 100_000 {
		starts = append(starts, b.Len())
		fmt.Fprintf(&b, "\tvalue%06d := compute(%d, \"some realistic line of code\")\n", i, i*7)
	}
	old = b.String()
	for k := range 10 {
		line := 5_000 + k*10_000 + k*37
		s := starts[line] + 1 // keep the tab, replace the rest of the line
		e := starts[line+1] - 1
		edits = append(edits, Edit{Start: s, End: e, New: fmt.Sprintf("changed%d := 0", k)})
	}
	new, err := Apply(old, edits)
	if err != nil {
		panic(err)
	}
	return old, new, edits
}

func TestBenchInput(t *testing.T) {
	old, new, edits := benchInput()
	whole := Compute("/p", &old, new)
	known := FromEdits("/p", old, edits)
	if len(whole) != 10 || len(known) != 10 {
		t.Fatalf("got %d and %d hunks, want 10 each", len(whole), len(known))
	}
	for i := range whole {
		if *whole[i].OldText != *known[i].OldText || whole[i].NewText != known[i].NewText {
			t.Errorf("hunk %d: whole-file and known-position paths disagree", i)
		}
	}
}

// BenchmarkCompute is the whole-file path (write): diff old against new.
func BenchmarkCompute(b *testing.B) {
	old, new, _ := benchInput()
	b.SetBytes(int64(len(old) + len(new)))
	cpuPerOp(b, func() {
		if len(Compute("/p", &old, new)) != 10 {
			b.Fatal("wrong hunk count")
		}
	})
}

// BenchmarkFromEdits is the known-position path (edit).
func BenchmarkFromEdits(b *testing.B) {
	old, _, edits := benchInput()
	cpuPerOp(b, func() {
		if len(FromEdits("/p", old, edits)) != 10 {
			b.Fatal("wrong hunk count")
		}
	})
}

// cpuPerOp reports the process CPU time per iteration next to ns/op: on a
// shared machine wall time measures the neighbours as much as the code.
func cpuPerOp(b *testing.B, run func()) {
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	n := 0
	for b.Loop() {
		run()
		n++
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
}
