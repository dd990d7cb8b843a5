// Package matchtest reads the edit corpus (tools/fs/match/testdata/corpus):
// edit cases restated from the peers' published tests, each an input
// file, an old_string and a new_string, and either the file the edit must
// leave or the refusal it must get. The matcher's own tests and the tests
// that drive the edit tool through the real binary share it.
package matchtest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/txtar"
)

// Case is one edit case.
type Case struct {
	Group, Name string // the corpus file and the case's name in it
	Peer        string // the peer and the test the case restates
	File        string
	Old, New    string
	All         bool
	Line        int // start_line, the line the model says old starts at (0: none)
	// Land: the edit must leave Want. Otherwise it must be refused with
	// Code, its message containing Contains.
	Land     bool
	Want     string
	Code     string
	Contains string
	Note     string // a word the tolerance note must contain ("" for exact)
	// ByDesign names why a case the peer lands is refused here ("drifted
	// middle"), "" when the peer's test refuses it too.
	ByDesign string
}

// ID names the case in test output: group/name.
func (c Case) ID() string { return c.Group + "/" + c.Name }

// Dir is the corpus directory, found from this file so any package's
// tests can read it.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "corpus")
}

// Load reads every case of the corpus, in file and case order.
func Load() ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "*.txtar"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no corpus in %s: %v", Dir(), err)
	}
	var all []Case
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			return nil, err
		}
		cs, err := parse(strings.TrimSuffix(filepath.Base(f), ".txtar"), ar)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, cs...)
	}
	return all, nil
}

func parse(group string, ar *txtar.Archive) ([]Case, error) {
	sections := map[string]map[string]string{}
	var order []string
	for _, f := range ar.Files {
		name, sec, ok := strings.Cut(f.Name, "/")
		if !ok {
			return nil, fmt.Errorf("section %q is not case/section", f.Name)
		}
		if sections[name] == nil {
			sections[name] = map[string]string{}
			order = append(order, name)
		}
		sections[name][sec] = string(f.Data)
	}
	var out []Case
	for _, name := range order {
		s := sections[name]
		meta := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(s["meta"]), "\n") {
			k, v, _ := strings.Cut(l, ": ")
			meta[k] = v
		}
		noeol, crlf := strings.Fields(meta["noeol"]), strings.Fields(meta["crlf"])
		text := func(sec string) string {
			t := s[sec]
			if slices.Contains(noeol, sec) {
				t = strings.TrimSuffix(t, "\n")
			}
			if slices.Contains(crlf, sec) {
				t = strings.ReplaceAll(t, "\n", "\r\n")
			}
			return t
		}
		line, _ := strconv.Atoi(meta["start_line"])
		c := Case{Group: group, Name: name, Peer: meta["peer"], File: text("file"), Old: text("old"), New: text("new"), Line: line,
			All: meta["all"] == "true", Land: meta["expect"] == "land", Code: meta["code"], Contains: meta["contains"],
			Note: meta["note"], ByDesign: meta["refused-by-design"]}
		if c.Land {
			c.Want = text("want")
		}
		if c.Peer == "" || c.Land == (c.Code != "") {
			return nil, fmt.Errorf("case %s: needs a peer, and a want or a code", name)
		}
		out = append(out, c)
	}
	return out, nil
}

// Tally counts a corpus run the way the issue reports it.
type Tally struct {
	Landed, Refused, RefusedByDesign, Missed, Wrong int
	Failures                                        []string
}

// Add counts one case's outcome: landed with the file it left, or
// refused with the code and message it got.
func (t *Tally) Add(c Case, landed bool, got, code, msg string) {
	switch {
	case landed && c.Land && got == c.Want:
		t.Landed++
	case landed:
		// A change the case does not expect is a wrong edit, whether the
		// file differs or the edit should have been refused.
		t.Wrong++
		t.Failures = append(t.Failures, fmt.Sprintf("%s: WRONG: left %q, want %q (refusal %s)", c.ID(), got, c.Want, c.Code))
	case c.Land:
		t.Missed++
		t.Failures = append(t.Failures, fmt.Sprintf("%s: MISSED: refused %s: %s", c.ID(), code, msg))
	case code != c.Code || !strings.Contains(msg, c.Contains):
		t.Missed++
		t.Failures = append(t.Failures, fmt.Sprintf("%s: refused with %s %q, want %s containing %q", c.ID(), code, msg, c.Code, c.Contains))
	case c.ByDesign != "":
		t.RefusedByDesign++
	default:
		t.Refused++
	}
}

func (t Tally) String() string {
	return fmt.Sprintf("landed %d, refused as the peer's test expects %d, refused by design where the peer lands (%s) %d, missed %d, wrong %d",
		t.Landed, t.Refused, "drifted or elided middle, ambiguity", t.RefusedByDesign, t.Missed, t.Wrong)
}

// Exists reports whether the corpus is present (it is part of the repo).
func Exists() bool { _, err := os.Stat(Dir()); return err == nil }
