package fs_test

import (
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

// An editor that answers a missing file with an empty text (Zed) must not
// make the file exist: read and edit say it is not found. An unsaved buffer
// for a file not on disk still reads.
func TestMissingFileAnsweredEmpty(t *testing.T) {
	ed := &fakeEditor{buffers: map[string]string{}, zed: true}
	e := newEnv(t, ed)
	ed.buffers[e.path("draft.txt")] = "unsaved\n"
	e.write("empty.txt", "")
	tests := []struct {
		name string
		tool string
		args args
		code string // "" for success
	}{
		{"read missing", "read", args{"file_path": "nope.txt"}, "FS_NOT_FOUND"},
		{"edit missing", "edit", args{"file_path": "nope.txt", "old_string": "a", "new_string": "b"}, "FS_NOT_FOUND"},
		{"read unsaved buffer", "read", args{"file_path": "draft.txt"}, ""},
		{"read empty file on disk", "read", args{"file_path": "empty.txt"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(tt.tool, tt.args)
			if r.Code != tt.code || r.IsError != (tt.code != "") {
				t.Fatalf("got %v %s %q, want code %q", r.IsError, r.Code, r.Text(), tt.code)
			}
			if tt.code == "FS_NOT_FOUND" && r.Text() != "Error: file not found: "+e.path("nope.txt") {
				t.Errorf("text %q", r.Text())
			}
		})
	}
}

// expandTabs is a formatter: the editor saves tabs as four spaces.
func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// After the editor reformats a write, the session records the saved text:
// the next edit is not stale, the card shows the saved text, and the model
// is told what changed.
func TestReformattingWrite(t *testing.T) {
	for _, tool := range []string{"write", "edit"} {
		t.Run(tool, func(t *testing.T) {
			ed := &fakeEditor{buffers: map[string]string{}, zed: true, format: expandTabs}
			e := newEnv(t, ed)
			e.write("m.go", "package m\n\nfunc f() {\n}\n")
			e.mustRun("read", args{"file_path": "m.go"})
			a := args{"file_path": "m.go", "content": "package m\n\nfunc f() {\n\treturn\n}\n"}
			if tool == "edit" {
				a = args{"file_path": "m.go", "old_string": "{\n}", "new_string": "{\n\treturn\n}"}
			}
			r := e.mustRun(tool, a)
			want := "package m\n\nfunc f() {\n    return\n}\n"
			if got := e.read("m.go"); got != want {
				t.Fatalf("file %q", got)
			}
			if !strings.Contains(r.Text(), "the editor changed the file as it saved it") ||
				!strings.Contains(r.Text(), "- \treturn\n") ||
				!strings.Contains(r.Text(), "+     return") {
				t.Errorf("the model is not told about the reformat:\n%s", r.Text())
			}
			card, ok := e.scope.Get(tool).PresentResult(e.call(tool, a).Args, r).(registry.DiffCard)
			if !ok || len(card.Diffs) != 1 || !strings.Contains(card.Diffs[0].NewText, "    return\n") {
				t.Fatalf("card %#v", card)
			}
			if len(card.Locations) != 1 || card.Locations[0] != (registry.Location{Path: "m.go", Line: 4}) {
				t.Errorf("card locations %+v, want m.go line 4", card.Locations)
			}
			// The second edit, written against the saved text, succeeds
			// without a re-read.
			e.mustRun("edit", args{"file_path": "m.go", "old_string": "    return", "new_string": "    return // done"})
			if got := e.read("m.go"); !strings.Contains(got, "    return // done\n") {
				t.Errorf("file %q", got)
			}
		})
	}
}

// A write the editor saves unchanged says nothing more; the card points at
// the first changed line.
func TestChangeCardLine(t *testing.T) {
	tests := []struct {
		name    string
		file    string // "" for a new file
		tool    string
		args    args
		line    int
		noteSub string
	}{
		{"edit line 3", "a\nb\nc\nd\n", "edit", args{"old_string": "c", "new_string": "C"}, 3, ""},
		{"edit first line", "a\nb\n", "edit", args{"old_string": "a", "new_string": "A"}, 1, ""},
		{"write new file", "", "write", args{"content": "x\n"}, 1, ""},
		{"write appends", "a\nb\n", "write", args{"content": "a\nb\nc\n"}, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ed := &fakeEditor{buffers: map[string]string{}, zed: true}
			e := newEnv(t, ed)
			if tt.file != "" {
				e.write("f.txt", tt.file)
				e.mustRun("read", args{"file_path": "f.txt"})
			}
			tt.args["file_path"] = "f.txt"
			r := e.mustRun(tt.tool, tt.args)
			if strings.Contains(r.Text(), "Note:") {
				t.Errorf("a note without a reformat: %s", r.Text())
			}
			card := e.scope.Get(tt.tool).PresentResult(e.call(tt.tool, tt.args).Args, r).(registry.DiffCard)
			if len(card.Locations) != 1 || card.Locations[0].Line != tt.line {
				t.Errorf("locations %+v, want line %d", card.Locations, tt.line)
			}
		})
	}
}

// Search titles show the pattern (and include) as inline code.
func TestSearchTitles(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		tool string
		args args
		want string
	}{
		{"grep", args{"pattern": "a_b*c"}, "Grep `a_b*c`"},
		{"grep", args{"pattern": "x", "path": "src", "include": "*.go"}, "Grep `x` in src (`*.go`)"},
		{"grep", args{"pattern": "`tick`"}, "Grep `` `tick` ``"},
		{"glob", args{"pattern": "**/*.md"}, "Glob `**/*.md`"},
	}
	for _, tt := range tests {
		card, ok := e.scope.Get(tt.tool).PresentCall(e.call(tt.tool, tt.args).Args).(registry.GenericCard)
		if !ok || card.Title != tt.want {
			t.Errorf("%s %v: title %q, want %q", tt.tool, tt.args, card.Title, tt.want)
		}
	}
}
