package match_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/tools/fs/match"
)

// bigFile is about 1 MB of Go-like lines, each distinct.
func bigFile() string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "\tif v%d := compute(%d, x); v%d > limit {\n\t\treturn v%d\n\t}\n", i, i, i, i)
	}
	return b.String()
}

// BenchmarkFind is the matcher on a 1 MB file: an exact hit, a hit that
// needs the indentation step, a miss that runs every step and builds the
// refusal, and a block whose middle drifted, which runs every step and then
// lands on its first and last lines.
func BenchmarkFind(b *testing.B) {
	file := bigFile()
	for _, bc := range []struct{ name, old string }{
		{"exact", "\tif v9000 := compute(9000, x); v9000 > limit {\n\t\treturn v9000\n"},
		{"indentation", "if v9000 := compute(9000, x); v9000 > limit {\n    return v9000\n}"},
		{"miss", "if v9000 := compute(9000, y); v9000 > limit {\n    return v9000\n}"},
		{"block-anchor", "if v9000 := compute(9000, x); v9000 > limit {\n    return v900\n}"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = match.Find("f", file, bc.old, "x", false)
			}
		})
	}
}
