package match_test

import (
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/tools/fs/match"
	"github.com/google/go-cmp/cmp"
)

// TestAddedLineFollowsItsNeighbour: after a match that ignored
// indentation, a line new_string adds next to a line at the model's same
// depth lands at that line's depth in the file, whatever indentation the
// model used for the block (flattened, another step, another base). Every
// block of each file is tried, with a line added after each line that has
// a neighbour below at the model's same depth.
func TestAddedLineFollowsItsNeighbour(t *testing.T) {
	files := []string{
		"func f() {\n\tif a {\n\t\tb()\n\t\tc()\n\t}\n}\n",
		"class A:\n    def f(self):\n        if x:\n            a()\n            b()\n        return 1\n",
		"x:\n  y:\n    z: 1\n    w: 2\n  v: 3\n",
	}
	depth := func(ws string) int {
		return strings.Count(ws, "\t") + len(strings.ReplaceAll(ws, "\t", ""))/unitSpaces(ws)
	}
	models := map[string]func(ws string) string{
		"flattened":    func(string) string { return "" },
		"two spaces":   func(ws string) string { return strings.Repeat("  ", depth(ws)) },
		"four spaces":  func(ws string) string { return strings.Repeat("    ", depth(ws)) },
		"tabs":         func(ws string) string { return strings.Repeat("\t", depth(ws)) },
		"one deeper":   func(ws string) string { return " " + ws },
		"one step out": func(ws string) string { return strings.TrimPrefix(strings.TrimPrefix(ws, "\t"), "    ") },
	}
	tried := 0
	for _, file := range files {
		lines := strings.Split(strings.TrimSuffix(file, "\n"), "\n")
		for name, model := range models {
			for s := range lines {
				for e := s + 1; e < len(lines); e++ {
					var old []string
					for _, l := range lines[s : e+1] {
						ws := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
						old = append(old, model(ws)+strings.TrimLeft(l, " \t"))
					}
					oldText := strings.Join(old, "\n") + "\n"
					if strings.Contains(file, oldText) {
						continue // an exact match: nothing is adapted
					}
					for k := 0; k+1 < len(old); k++ {
						ws := old[k][:len(old[k])-len(strings.TrimLeft(old[k], " \t"))]
						if !strings.HasPrefix(old[k+1], ws) || strings.HasPrefix(old[k+1][len(ws):], " ") || strings.HasPrefix(old[k+1][len(ws):], "\t") {
							continue // the next line is at another depth
						}
						tried++
						added := slicesInsert(old, k+1, ws+"added()")
						fws := lines[s+k][:len(lines[s+k])-len(strings.TrimLeft(lines[s+k], " \t"))]
						want := strings.Join(slicesInsert(lines, s+k+1, fws+"added()"), "\n") + "\n"
						r, err := match.Find("f", file, oldText, strings.Join(added, "\n")+"\n", false)
						if err != nil {
							t.Errorf("%s, lines %d-%d: %v", name, s+1, e+1, err)
							continue
						}
						if got := match.Apply(file, r.Edits); got != want {
							t.Errorf("%s, lines %d-%d, added after line %d (%s):\n%s", name, s+1, e+1, s+k+1, r.Note(), cmp.Diff(want, got))
						}
					}
				}
			}
		}
	}
	t.Logf("%d edits tried", tried)
}

func unitSpaces(ws string) int {
	if strings.Contains(ws, "\t") || ws == "" {
		return 1
	}
	for _, u := range []int{4, 2} {
		if len(ws)%u == 0 {
			return u
		}
	}
	return 1
}

func slicesInsert(s []string, at int, v string) []string {
	return append(append(append([]string(nil), s[:at]...), v), s[at:]...)
}

// TestAdaptedIndentation: lines that replace matched lines take the file's
// indentation at their place; lines added among them take their
// neighbour's.
func TestAdaptedIndentation(t *testing.T) {
	for _, c := range []struct{ name, file, old, new, want string }{
		{"flattened: a line added after a deeper line stays at its depth",
			"func f() {\n\tif a {\n\t\tb()\n\t}\n}\n", "if a {\nb()\n}\n", "if a {\nb()\nc()\n}\n",
			"func f() {\n\tif a {\n\t\tb()\n\t\tc()\n\t}\n}\n"},
		{"changed lines around an added one keep their places",
			"def f():\n    if x:\n        a = 1\n        b = 2\n    return a\n", "if x:\na = 1\nb = 2\nreturn a\n", "if x:\na = 10\nc = 3\nb = 20\nreturn a + b\n",
			"def f():\n    if x:\n        a = 10\n        c = 3\n        b = 20\n    return a + b\n"},
		{"a block the model opens under an added line",
			"func f() {\n\tif a {\n\t\tb()\n\t}\n}\n", "if a {\n    b()\n}\n", "if a {\n    b()\n    for {\n        c()\n    }\n}\n",
			"func f() {\n\tif a {\n\t\tb()\n\t\tfor {\n\t\t\tc()\n\t\t}\n\t}\n}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := match.Find("f", c.file, c.old, c.new, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := match.Apply(c.file, r.Edits); got != c.want {
				t.Errorf("%s\n%s", r.Note(), cmp.Diff(c.want, got))
			}
		})
	}
}
