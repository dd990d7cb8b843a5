package fs_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestReadFormat(t *testing.T) {
	long := strings.Repeat("é", 2500)
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	wide := strings.Repeat(strings.Repeat("w", 100)+"\n", 1000) // 101 KB: past the 50 KiB cap
	tests := []struct {
		name    string
		content string
		args    args
		body    string // between "<content>\n" and "\n</content>"
	}{
		{"small", "a\nb\n", nil, "1: a\n2: b\n\n(End of file - total 2 lines)"},
		{"no final newline", "a\nb", nil, "1: a\n2: b\n\n(End of file - total 2 lines)"},
		{"crlf and bom hidden", "\uFEFFa\r\nb\r\n", nil, "1: a\n2: b\n\n(End of file - total 2 lines)"},
		{"empty", "", nil, "\n(End of file - total 0 lines)"},
		{"offset and limit", "a\nb\nc\nd\n", args{"offset": 2, "limit": 2}, "2: b\n3: c\n\n(Showing lines 2-3 of 4. Use offset=4 to continue.)"},
		{"long line", long + "\n", nil, "1: " + strings.Repeat("é", 2000) + "... (line truncated to 2000 chars)\n\n(End of file - total 1 lines)"},
		{"2000 lines per call", many.String(), nil, ""},
		{"50 KiB per call", wide, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.write("f.txt", tt.content)
			a := args{"file_path": "f.txt"}
			for k, v := range tt.args {
				a[k] = v
			}
			got := e.mustRun("read", a).Text()
			head := "<path>" + p + "</path>\n<type>file</type>\n<content>\n"
			if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, "\n</content>") {
				t.Fatalf("frame:\n%s", got)
			}
			body := strings.TrimSuffix(strings.TrimPrefix(got, head), "\n</content>")
			switch tt.name {
			case "2000 lines per call":
				if !strings.HasSuffix(body, "2000: line 2000\n\n(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)") {
					t.Errorf("tail %q", body[len(body)-100:])
				}
			case "50 KiB per call":
				n := strings.Count(body, "\n") - 1 // entries, then a blank line before the footer
				if len(body) > 51200+200 || !strings.Contains(body, fmt.Sprintf("(Output capped. Showing lines 1-%d. Use offset=%d to continue.)", n, n+1)) {
					t.Errorf("%d bytes, footer %q", len(body), body[len(body)-80:])
				}
			default:
				if body != tt.body {
					t.Errorf("body:\n%q\nwant\n%q", body, tt.body)
				}
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	e := newEnv(t, nil)
	e.write("a.txt", "x\n")
	if err := os.WriteFile(e.path("bin"), []byte("ELF\x00\x01"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(e.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args args
		code string
		text string
	}{
		{args{"file_path": "missing"}, "FS_NOT_FOUND", "Error: file not found: " + e.path("missing")},
		{args{"file_path": "bin"}, "FS_BINARY", "Error: cannot read binary file: " + e.path("bin")},
		{args{"file_path": "d"}, "FS_IS_DIRECTORY", "Error: " + e.path("d") + " is a directory, not a file"},
		{args{"file_path": "a.txt", "offset": 5}, "FS_BAD_OFFSET", "Error: offset 5 is beyond the end of " + e.path("a.txt") + " (1 lines)"},
	}
	for _, tt := range tests {
		r := e.run("read", tt.args)
		if !r.IsError || r.Code != tt.code || r.Text() != tt.text {
			t.Errorf("%v: %s %q, want %s %q", tt.args, r.Code, r.Text(), tt.code, tt.text)
		}
	}
}

func TestBinaryNotAskedOfEditor(t *testing.T) {
	ed := &fakeEditor{buffers: map[string]string{}}
	e := newEnv(t, ed)
	if err := os.WriteFile(e.path("img.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("read", args{"file_path": "img.png"}); r.Code != "FS_BINARY" {
		t.Errorf("got %s %s", r.Code, r.Text())
	}
	if ed.readCount() != 0 {
		t.Errorf("the editor was asked for a binary file as text")
	}
}
