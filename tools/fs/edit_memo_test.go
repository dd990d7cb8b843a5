package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs/match"
)

// An edit previewed and then run walks the matcher's cascade once when the
// file did not change in between, and again when it did; an exact match is
// found anew each time (cheaper than remembering it).
func TestEditPreviewThenRunMatchesOnce(t *testing.T) {
	walked := 0
	defer func(f func(string, string, string, string, bool, int) (match.Result, error)) { findMatch = f }(findMatch)
	findMatch = func(path, content, old, new string, all bool, at int) (match.Result, error) {
		walked++
		return match.FindAt(path, content, old, new, all, at)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f.go")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &registry.Call{Cwd: dir, Roots: []string{dir}}
	tolerant := editArgs{FilePath: "f.go", OldString: "if x {\n    y()\n}", NewString: "if x {\n    y()\n    z()\n}"}
	const indented = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n"
	tests := []struct {
		name    string
		in      editArgs
		between func() // what happens to the file between preview and run
		walks   int
		want    string
	}{
		{"tolerant, file unchanged", tolerant, func() {}, 1, "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n"},
		{"tolerant, file changed", tolerant, func() { write("// changed\n" + indented) }, 2, "// changed\nfunc f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n"},
		{"exact", editArgs{FilePath: "f.go", OldString: "y()", NewString: "w()"}, func() {}, 2, "func f() {\n\tif x {\n\t\tw()\n\t}\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write(indented)
			walked = 0
			pre, err := previewEdit(t.Context(), c, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			tt.between()
			out, err := runEdit(t.Context(), c, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if walked != tt.walks {
				t.Errorf("the cascade was walked %d times, want %d", walked, tt.walks)
			}
			if out.Matched != pre.Matched {
				t.Errorf("run matched %q, preview %q", out.Matched, pre.Matched)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.want {
				t.Errorf("file %q, want %q", got, tt.want)
			}
		})
	}
}
