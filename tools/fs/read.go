package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/google/jsonschema-go/jsonschema"
	"io"
	iofs "io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
)

// Limits of one read call: what the model is told it may ask for.
const (
	readLimit         = 2000      // lines per call
	readMaxLineLength = 2000      // characters per line
	readMaxBytes      = 50 * 1024 // bytes of content per call
)

type readArgs struct {
	FilePath string `json:"file_path" jsonschema:"The path of the file to read, absolute or relative to the workspace root"`
	Offset   int    `json:"offset,omitempty" jsonschema:"The 1-based line to start reading from"`
	Limit    int    `json:"limit,omitempty" jsonschema:"The number of lines to read (at most 2000)"`
}

func readTool() registry.Tool[readArgs, string] {
	return registry.Tool[readArgs, string]{
		Name:  "read",
		Facts: registry.Facts{ReadOnly: true, Kind: "read"},
		Description: "Read a text file. Lines are numbered \"N: text\". Reads at most 2000 lines, " +
			"2000 characters per line and 50 KiB per call; use offset and limit to page through larger files.",
		Schema: func(s *jsonschema.Schema) {
			s.Properties["offset"].Minimum = jsonschema.Ptr(1.0)
			s.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
		},
		Run:             runRead,
		ConcurrencySafe: func(readArgs) bool { return true },
		Permission: func(c *registry.Call, in readArgs) *registry.Permission {
			return outsidePermission(c, resolve(c.Cwd, in.FilePath), "read")
		},
		PresentCall: func(in readArgs) registry.View {
			return readCard(in, "")
		},
		PresentResult: func(in readArgs, r registry.Result) registry.View {
			if r.IsError {
				return nil // the generic card shows the error text
			}
			return readCard(in, fence(registry.ContentSection(r.Text()), ""))
		},
	}
}

// readCard titles a read "Read <path> (a - b)" with the line it starts at.
func readCard(in readArgs, content string) registry.View {
	p := in.FilePath
	title := "Read " + p
	switch {
	case in.Offset > 0 && in.Limit > 0:
		title += fmt.Sprintf(" (%d - %d)", in.Offset, in.Offset+in.Limit-1)
	case in.Offset > 0:
		title += fmt.Sprintf(" (from line %d)", in.Offset)
	case in.Limit > 0:
		title += fmt.Sprintf(" (1 - %d)", in.Limit)
	}
	line := max(in.Offset, 1)
	card := registry.GenericCard{Title: title, Kind: "read", Locations: []registry.Location{{Path: p, Line: line}}}
	if content != "" {
		card.Content = []registry.Content{registry.Text(content)}
	}
	return card
}

func runRead(ctx context.Context, c *registry.Call, in readArgs) (string, error) {
	path := resolve(c.Cwd, in.FilePath)
	data, err := readFile(ctx, c, path)
	if err != nil {
		return "", err
	}
	out, err := formatRead(path, data, in.Offset, in.Limit)
	if err != nil {
		return "", err
	}
	// The whole file was read, whatever part was shown: that is the version
	// a later edit is checked against.
	if t := tracker(c); t != nil {
		t.MarkRead(path, diffs.Hash(string(data)))
	}
	return out, nil
}

// readFile returns the file's text through the call's file access (the
// editor's buffer when the agent offers it). A binary file on disk is refused
// before the editor is asked for it as text.
func readFile(ctx context.Context, c *registry.Call, path string) ([]byte, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		if c.Files == nil {
			return nil, notFound(path)
		}
		// The editor may hold an unsaved buffer for a file not yet on disk.
	case err != nil:
		return nil, registry.Errorf("FS_ERROR", err.Error())
	case st.IsDir():
		return nil, registry.Errorf("FS_IS_DIRECTORY", fmt.Sprintf("%s is a directory, not a file", path))
	default:
		if head, err := readHead(path, 8192); err == nil && bytes.IndexByte(head, 0) >= 0 {
			return nil, registry.Errorf("FS_BINARY", fmt.Sprintf("cannot read binary file: %s", path))
		}
	}
	s, err := readText(ctx, c, path, err == nil)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// readHead returns up to n bytes from the start of path.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	m, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return b[:m], err
}

func isBinary(data []byte) bool {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if len(head) < len(data) {
		// The sample may end inside a rune: drop the last, possibly partial one.
		for len(head) > 0 && !utf8.RuneStart(head[len(head)-1]) {
			head = head[:len(head)-1]
		}
		if len(head) > 0 {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

// formatRead renders lines offset.. of data in the exact read format.
func formatRead(path string, data []byte, offset, limit int) (string, error) {
	if isBinary(data) {
		return "", registry.Errorf("FS_BINARY", fmt.Sprintf("cannot read binary file: %s", path))
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	var lines []string
	if text != "" {
		lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	if limit <= 0 || limit > readLimit {
		limit = readLimit
	}
	w, ok := registry.PageLines(len(lines), offset, limit, readMaxBytes, func(i int) string {
		line := strings.TrimSuffix(lines[i], "\r")
		if utf8.RuneCountInString(line) > readMaxLineLength {
			line = string([]rune(line)[:readMaxLineLength]) + fmt.Sprintf("... (line truncated to %d chars)", readMaxLineLength)
		}
		return fmt.Sprintf("%d: %s\n", i+1, line)
	})
	if !ok {
		return "", registry.Errorf("FS_BAD_OFFSET", fmt.Sprintf("offset %d is beyond the end of %s (%d lines)", offset, path, len(lines)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<path>%s</path>\n<type>file</type>\n<content>\n%s\n", path, w.Text)
	switch {
	case w.Capped:
		fmt.Fprintf(&b, "(Output capped. Showing lines %d-%d. Use offset=%d to continue.)", w.First, w.Last, w.Next())
	case w.Next() > 0:
		b.WriteString("(" + registry.ShowingLines(w.First, w.Last, w.Total) + ")")
	default:
		fmt.Fprintf(&b, "(End of file - total %d lines)", w.Total)
	}
	b.WriteString("\n</content>")
	return b.String(), nil
}
