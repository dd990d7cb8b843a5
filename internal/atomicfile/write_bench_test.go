//go:build linux

package atomicfile

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkWrite: replacements of a 4 KiB and a 1 MiB file into an
// unnamed file (the Linux way) and through a named temporary file (where
// O_TMPFILE is refused), journal kept, one of each in turn in every
// iteration so both see the same machine. Reported: each way's median
// (unnamed-us, named-us) and the median of the paired ratios
// (unnamed-x-named).
//
//	go test ./internal/atomicfile -run '^$' -bench Write -benchtime 200x
func BenchmarkWrite(b *testing.B) {
	stop, err := Journal(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	refuse := func(string) (int, error) { return -1, unix.EOPNOTSUPP }
	unnamed := openUnnamed
	defer func() { openUnnamed = unnamed }()
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			data := []byte(strings.Repeat("x", size))
			target := filepath.Join(b.TempDir(), "f.txt")
			var u, n []time.Duration
			once := func(open func(string) (int, error), into *[]time.Duration) {
				openUnnamed = open
				t0 := time.Now()
				if err := Write(target, data); err != nil {
					b.Fatal(err)
				}
				*into = append(*into, time.Since(t0))
			}
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					once(unnamed, &u)
					once(refuse, &n)
				} else {
					once(refuse, &n)
					once(unnamed, &u)
				}
				i++
			}
			ratios := make([]float64, len(u))
			for k := range u {
				ratios[k] = float64(u[k]) / float64(n[k])
			}
			med := func(d []time.Duration) float64 {
				d = slices.Clone(d)
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds())
			}
			slices.Sort(ratios)
			b.ReportMetric(med(u), "unnamed-us")
			b.ReportMetric(med(n), "named-us")
			b.ReportMetric(ratios[len(ratios)/2], "unnamed-x-named")
		})
	}
}
