package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

// The read output format is exact (tools/fs/read.go): models are
// prompted against it.
func TestReadFormat(t *testing.T) {
	long := strings.Repeat("x", 2100)
	many := strings.Repeat("line\n", 2500)
	// Lines "N: " + 100 bytes + "\n": 1-9 take 104 bytes, 10-99 105, 100+ 106;
	// 936 + 9450 + 385*106 = 51196 bytes fit in 51200, so line 484 is the last.
	big := strings.Repeat(strings.Repeat("y", 100)+"\n", 1000)
	tests := []struct {
		name          string
		content       string
		offset, limit int
		want          string // exact output, or a substring when contains is set
		contains      bool
		wantErrCode   string
	}{
		{name: "small file", content: "a\nb\n", want: "<path>P</path>\n<type>file</type>\n<content>\n1: a\n2: b\n\n(End of file - total 2 lines)\n</content>"},
		{name: "no final newline", content: "a\nb", want: "<path>P</path>\n<type>file</type>\n<content>\n1: a\n2: b\n\n(End of file - total 2 lines)\n</content>"},
		{name: "empty file", content: "", want: "<path>P</path>\n<type>file</type>\n<content>\n\n(End of file - total 0 lines)\n</content>"},
		{name: "CRLF shown without CR", content: "a\r\nb\r\n", want: "<path>P</path>\n<type>file</type>\n<content>\n1: a\n2: b\n\n(End of file - total 2 lines)\n</content>"},
		{name: "BOM dropped", content: "\uFEFFa\n", want: "<path>P</path>\n<type>file</type>\n<content>\n1: a\n\n(End of file - total 1 lines)\n</content>"},
		{name: "offset and limit", content: "a\nb\nc\nd\n", offset: 2, limit: 2, want: "<path>P</path>\n<type>file</type>\n<content>\n2: b\n3: c\n\n(Showing lines 2-3 of 4. Use offset=4 to continue.)\n</content>"},
		{name: "line limit", content: many, want: "(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)", contains: true},
		{name: "limit capped at 2000", content: many, limit: 5000, want: "(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)", contains: true},
		{name: "byte cap", content: big, want: "(Output capped. Showing lines 1-484. Use offset=485 to continue.)", contains: true},
		{name: "long line", content: long + "\n", want: "1: " + strings.Repeat("x", 2000) + "... (line truncated to 2000 chars)\n", contains: true},
		{name: "offset past the end", content: "a\n", offset: 5, wantErrCode: "FS_BAD_OFFSET"},
		{name: "binary", content: "\x00\x01\x02", wantErrCode: "FS_BINARY"},
		{name: "invalid UTF-8", content: "caf\xe9\n", wantErrCode: "FS_BINARY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := formatRead("P", []byte(tt.content), tt.offset, tt.limit)
			if tt.wantErrCode != "" {
				var te *registry.Error
				if !errors.As(err, &te) || te.Code != tt.wantErrCode {
					t.Fatalf("err = %v, want code %s", err, tt.wantErrCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.contains && !strings.Contains(got, tt.want) || !tt.contains && got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", tail(got), tt.want)
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 400 {
		return "…" + s[len(s)-400:]
	}
	return s
}

func TestReadToolResolvesAgainstCwd(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("hi\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, tt := range []struct {
		path, code string
	}{
		{"f.txt", ""},
		{filepath.Join(dir, "f.txt"), ""},
		{"missing.txt", "FS_NOT_FOUND"},
		{"sub", "FS_IS_DIRECTORY"},
	} {
		out, err := runRead(context.Background(), &registry.Call{Cwd: dir}, readArgs{FilePath: tt.path})
		var te *registry.Error
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("%s: %v", tt.path, err)
		case tt.code == "" && !strings.HasPrefix(out, "<path>"+filepath.Join(dir, "f.txt")+"</path>"):
			t.Errorf("%s: %q", tt.path, out)
		case tt.code != "" && (!errors.As(err, &te) || te.Code != tt.code):
			t.Errorf("%s: err %v, want %s", tt.path, err, tt.code)
		}
	}
}
