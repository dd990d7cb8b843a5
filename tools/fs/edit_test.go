package fs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

func TestEditRoundTrips(t *testing.T) {
	const bom = "\uFEFF"
	tests := []struct {
		name      string
		file      string
		old, new  string
		all       bool
		want      string
		wantCount int
	}{
		{"lf", "a\nb\nc\n", "b", "B", false, "a\nB\nc\n", 1},
		{"crlf stays crlf", "a\r\nb\r\nc\r\n", "a\nb", "x\ny\nz", false, "x\r\ny\r\nz\r\nc\r\n", 1},
		{"crlf with model crlf", "a\r\nb\r\n", "a\r\nb", "c\r\nd", false, "c\r\nd\r\n", 1},
		{"bom stays", bom + "first\nsecond\n", "first", "1st", false, bom + "1st\nsecond\n", 1},
		{"bom and crlf", bom + "k=v\r\nx=y\r\n", "k=v\nx=y", "k=w\nx=z", false, bom + "k=w\r\nx=z\r\n", 1},
		{"final newline kept when the edit drops it", "a\nlast\n", "last\n", "end", false, "a\nend\n", 1},
		{"final newline kept crlf", "a\r\nlast\r\n", "last\n", "end", false, "a\r\nend\r\n", 1},
		{"no final newline stays none", "a\nlast", "last", "end\n", false, "a\nend", 1},
		{"deleting the last line keeps one newline", "a\nb\n", "b\n", "", false, "a\n", 1},
		{"replace all", "x=1\nx=2\nx=3\n", "x=", "y=", true, "y=1\ny=2\ny=3\n", 3},
		{"middle untouched by newline rule", "a\nb\nc", "b\n", "B\n", false, "a\nB\nc", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.write("f.txt", tt.file)
			e.mustRun("read", args{"file_path": "f.txt"})
			editArgs := args{"file_path": "f.txt", "old_string": tt.old, "new_string": tt.new, "replace_all": tt.all}
			r := e.mustRun("edit", editArgs)
			if got := e.read("f.txt"); got != tt.want {
				t.Errorf("file %q, want %q", got, tt.want)
			}
			want := "The file " + p + " has been updated successfully."
			if tt.all {
				want = "The file " + p + " has been updated. All occurrences were successfully replaced."
			}
			if r.Text() != want {
				t.Errorf("text %q, want %q", r.Text(), want)
			}
			// Presenters see the call's own arguments (invalid ones give no card).
			v := e.scope.Get("edit").PresentResult(e.call("edit", editArgs).Args, r)
			card, ok := v.(registry.DiffCard)
			if !ok || len(card.Diffs) == 0 || card.Diffs[0].Path != p || card.Diffs[0].OldText == nil {
				t.Fatalf("result card %#v", v)
			}
		})
	}
}

func TestEditErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *env) // after f.txt = "one two two\n" exists
		args  args
		code  string
		text  string // %p is the absolute path
	}{
		{"not read", nil, args{"old_string": "one", "new_string": "1"}, "FS_NOT_OBSERVED",
			`Error: edit requires reading "%p" first — read the file, then retry`},
		{"changed since read", func(e *env) {
			e.mustRun("read", args{"file_path": "f.txt"})
			e.write("f.txt", "one two two three\n")
		}, args{"old_string": "one", "new_string": "1"}, "FS_STALE_VERSION",
			`Error: edit requires reading "%p" first: the file changed since it was read — re-read the file, then retry`},
		{"not found", read, args{"old_string": "three", "new_string": "3"}, "FS_EDIT_NOT_FOUND",
			`Error: old_string was not found in "%p", not even ignoring whitespace and indentation: no line of it is in the file. Read the file again and copy old_string from it`},
		{"ambiguous", read, args{"old_string": "two", "new_string": "2"}, "FS_AMBIGUOUS_EDIT",
			`Error: old_string matched 2 times in "%p", starting at line 1 (2 times). Set start_line to the line where the one you mean starts, provide a more specific old_string (include more surrounding lines in old_string to pick one), or set replace_all to true`},
		{"start_line with replace_all", read, args{"old_string": "two", "new_string": "2", "start_line": 1, "replace_all": true}, "FS_INVALID_EDIT",
			`Error: start_line picks one occurrence and replace_all replaces every one: give one of them`},
		{"empty old", read, args{"old_string": "", "new_string": "x"}, "FS_INVALID_EDIT",
			`Error: old_string must not be empty; use write to create a file or replace all of it`},
		{"identical", read, args{"old_string": "one", "new_string": "one"}, "FS_INVALID_EDIT",
			`Error: old_string and new_string are identical; there is nothing to change`},
		{"missing file", nil, args{"file_path": "nope.txt", "old_string": "a", "new_string": "b"}, "FS_NOT_FOUND",
			`Error: file not found: %p`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.write("f.txt", "one two two\n")
			if tt.setup != nil {
				tt.setup(e)
			}
			a := args{"file_path": "f.txt"}
			for k, v := range tt.args {
				a[k] = v
			}
			before := e.read("f.txt")
			r := e.run("edit", a)
			want := strings.ReplaceAll(tt.text, "%p", e.path(a["file_path"].(string)))
			if !r.IsError || r.Code != tt.code || r.Text() != want {
				t.Errorf("got %v %s %q\nwant %s %q", r.IsError, r.Code, r.Text(), tt.code, want)
			}
			if after := e.read("f.txt"); after != before {
				t.Errorf("a failed edit changed the file: %q", after)
			}
		})
	}
}

func read(e *env) { e.mustRun("read", args{"file_path": "f.txt"}) }

func TestEditAfterOwnWriteNeedsNoRead(t *testing.T) {
	e := newEnv(t, nil)
	e.mustRun("write", args{"file_path": "n.txt", "content": "alpha\n"})
	e.mustRun("edit", args{"file_path": "n.txt", "old_string": "alpha", "new_string": "beta"})
	e.mustRun("edit", args{"file_path": "n.txt", "old_string": "beta", "new_string": "gamma"})
	if got := e.read("n.txt"); got != "gamma\n" {
		t.Errorf("got %q", got)
	}
}

func TestWrite(t *testing.T) {
	e := newEnv(t, nil)
	// A new file in a new directory: created, whole-file diff.
	r := e.mustRun("write", args{"file_path": "a/b/new.txt", "content": "hello\n"})
	p := e.path("a/b/new.txt")
	if want := "<path>" + p + "</path>\n<type>file</type>\n<content>\nCreated file\n</content>"; r.Text() != want {
		t.Errorf("text %q", r.Text())
	}
	v := e.scope.Get("write").PresentResult(json.RawMessage(`{"file_path":"a/b/new.txt","content":"hello\n"}`), r)
	card := v.(registry.DiffCard)
	if len(card.Diffs) != 1 || card.Diffs[0].OldText != nil || card.Diffs[0].NewText != "hello\n" || card.Diffs[0].Path != p {
		t.Errorf("new-file card %#v", card)
	}
	// Overwriting an existing file needs a read first.
	e.write("old.sh", "#!/bin/sh\necho 1\n")
	if err := os.Chmod(e.path("old.sh"), 0o751); err != nil {
		t.Fatal(err)
	}
	if r := e.run("write", args{"file_path": "old.sh", "content": "x"}); r.Code != "FS_NOT_OBSERVED" {
		t.Fatalf("overwrite without read: %s %s", r.Code, r.Text())
	}
	e.mustRun("read", args{"file_path": "old.sh"})
	r = e.mustRun("write", args{"file_path": "old.sh", "content": "#!/bin/sh\necho 2\n"})
	if !strings.Contains(r.Text(), "Updated file") {
		t.Errorf("text %q", r.Text())
	}
	st, err := os.Stat(e.path("old.sh"))
	if err != nil || st.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751 kept", st.Mode())
	}
	var m struct{ Diffs []registry.FileDiff }
	if err := json.Unmarshal(r.Meta, &m); err != nil || len(m.Diffs) != 1 || *m.Diffs[0].OldText != "#!/bin/sh\necho 1\n" {
		t.Errorf("applied hunks %s", r.Meta)
	}
	// No temp files left behind.
	ents, _ := os.ReadDir(e.dir)
	for _, en := range ents {
		if strings.Contains(en.Name(), "acp-bridge") {
			t.Errorf("temp file left: %s", en.Name())
		}
	}
}

// TestWriteAtomicUnderConcurrentReader: a reader polling the file while it
// is rewritten must only ever see one complete version.
func TestWriteAtomicUnderConcurrentReader(t *testing.T) {
	for _, withAgent := range []bool{true, false} {
		e := newEnv(t, nil)
		if !withAgent {
			e.files = nil // the tools' own disk access
		}
		const size = 256 << 10
		big := func(c byte) string { return strings.Repeat(string(c), size) }
		// A complete version is size copies of one letter.
		whole := func(b []byte) bool { return len(b) == size && bytes.Count(b, b[:1]) == size }
		e.write("big.txt", big('a'))
		p := e.path("big.txt")
		stop := make(chan struct{})
		bad := make(chan string, 1)
		go func() {
			defer close(bad)
			for {
				select {
				case <-stop:
					return
				default:
				}
				b, err := os.ReadFile(p)
				if err != nil {
					bad <- "missing file: " + err.Error()
					return
				}
				if !whole(b) {
					bad <- fmt.Sprintf("torn read: %d bytes, %q…%q", len(b), b[:min(len(b), 8)], b[max(0, len(b)-8):])
					return
				}
				time.Sleep(50 * time.Microsecond) // leave the writer some CPU under -race
			}
		}()
		for c := byte('b'); c <= 'p'; c++ {
			_ = e.run("read", args{"file_path": "big.txt"})
			e.mustRun("write", args{"file_path": "big.txt", "content": big(c)})
		}
		close(stop)
		if msg, ok := <-bad; ok {
			t.Fatalf("agent=%v: %s", withAgent, msg)
		}
	}
}

// TestEditTolerantMatchSaysSo: an edit matched tolerantly tells the model
// how in its result, the card's title says it, and the card's diff is the
// change applied (the file's indentation, not the model's).
func TestEditTolerantMatchSaysSo(t *testing.T) {
	e := newEnv(t, nil)
	p := e.write("f.go", "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n")
	e.mustRun("read", args{"file_path": "f.go"})
	editArgs := args{"file_path": "f.go", "old_string": "if x {\n    y()\n}", "new_string": "if x {\n    y()\n    z()\n}"}
	r := e.mustRun("edit", editArgs)
	if got, want := e.read("f.go"), "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n"; got != want {
		t.Fatalf("file %q, want %q", got, want)
	}
	if want := "The file " + p + " has been updated successfully. Note: old_string was not exact; it matched ignoring indentation, and new_string was adapted to the file. The diff shows what was applied."; r.Text() != want {
		t.Errorf("text %q\nwant %q", r.Text(), want)
	}
	card, ok := e.scope.Get("edit").PresentResult(e.call("edit", editArgs).Args, r).(registry.DiffCard)
	if !ok || card.Title != "Edit f.go (matched ignoring indentation)" || len(card.Diffs) != 1 {
		t.Fatalf("card %#v", card)
	}
	if d := card.Diffs[0]; d.OldText == nil || !strings.Contains(d.NewText, "\t\tz()\n") || strings.Contains(d.NewText, "    z()") {
		t.Errorf("the card's diff is not what was applied: %q -> %q", *d.OldText, d.NewText)
	}
	// An exact edit's card says nothing more.
	r = e.mustRun("edit", args{"file_path": "f.go", "old_string": "z()", "new_string": "w()"})
	if card := e.scope.Get("edit").PresentResult(e.call("edit", args{"file_path": "f.go", "old_string": "z()", "new_string": "w()"}).Args, r).(registry.DiffCard); card.Title != "Edit f.go" {
		t.Errorf("exact edit's title %q", card.Title)
	}
}

// The version a write or edit leaves is hashed once (diffs.Version): the
// hash the change's Undo records is the one the session's read-tracking
// holds, also when the editor formats the text as it saves it.
func TestChangeRecordsTheVersionItTracks(t *testing.T) {
	ed := &fakeEditor{buffers: map[string]string{}, format: func(s string) string { return strings.ReplaceAll(s, "\t", "    ") }}
	e := newEnv(t, ed)
	p := e.path("a.go")
	tracker := e.files.(fs.Tracker)
	for _, step := range []struct {
		tool  string
		args  map[string]any
		saved string
	}{
		{"write", map[string]any{"file_path": p, "content": "a\n\tb\n"}, "a\n    b\n"},
		{"edit", map[string]any{"file_path": p, "old_string": "a", "new_string": "\tc"}, "    c\n    b\n"},
	} {
		r := e.mustRun(step.tool, step.args)
		var m struct{ Undo diffs.Undo }
		if err := json.Unmarshal(r.Meta, &m); err != nil {
			t.Fatalf("%s: meta %s: %v", step.tool, r.Meta, err)
		}
		if m.Undo.After != diffs.Hash(step.saved) {
			t.Errorf("%s: the undo records %s, not the hash of the text saved", step.tool, m.Undo.After)
		}
		if seen, current := tracker.ReadState(p, m.Undo.After); !seen || !current {
			t.Errorf("%s: the tracked version is not the one the undo records (seen %v, current %v)", step.tool, seen, current)
		}
	}
}
