package fs

import (
	"context"
	"errors"
	"fmt"
	"github.com/google/jsonschema-go/jsonschema"
	iofs "io/fs"
	"os"
	"strings"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
)

type editArgs struct {
	FilePath   string `json:"file_path" jsonschema:"The path of the file to edit, absolute or relative to the workspace root"`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"The text to replace it with (must differ from old_string)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string (default false)"`
}

func editTool() registry.Tool[editArgs, changeOut] {
	return registry.Tool[editArgs, changeOut]{
		Name:  "edit",
		Facts: registry.Facts{Edits: true, Kind: "edit"},
		Description: "Replace text in a file: old_string (literal, exactly as the file has it, without the \"N: \" line prefixes of read) " +
			"becomes new_string. old_string must occur exactly once unless replace_all is true. " +
			"Read the file in this session first. Line endings, a byte-order mark and the final newline are kept as the file has them.",
		Schema: func(s *jsonschema.Schema) { s.Properties["file_path"].MinLength = jsonschema.Ptr(1) },
		Run:    runEdit,
		Render: func(_ editArgs, out changeOut) []registry.Content {
			if out.All {
				return withNote(fmt.Sprintf("The file %s has been updated. All occurrences were successfully replaced.", out.Path), out)
			}
			return withNote(fmt.Sprintf("The file %s has been updated successfully.", out.Path), out)
		},
		Meta: func(_ editArgs, out changeOut) any { return changeMeta(out) },
		PresentCall: func(in editArgs) registry.View {
			d := registry.FileDiff{Path: in.FilePath, NewText: in.NewString}
			if in.OldString != "" {
				old := in.OldString
				d.OldText = &old
			}
			return registry.DiffCard{Title: "Edit " + in.FilePath, Diffs: []registry.FileDiff{d},
				Locations: []registry.Location{{Path: in.FilePath}}}
		},
		PresentResult: func(in editArgs, r registry.Result) registry.View {
			return changeCard("Edit "+in.FilePath, in.FilePath, r)
		},
		Preview: previewEdit,
		Permission: func(c *registry.Call, in editArgs) *registry.Permission {
			return editPermission(c, resolve(c.Cwd, in.FilePath))
		},
	}
}

// previewEdit is the edit as it would be applied to the file as it is now:
// its hunks with their context, as the finished card shows them. The read
// is not recorded as the session reading the file.
func previewEdit(ctx context.Context, c *registry.Call, in editArgs) (changeOut, error) {
	path := resolve(c.Cwd, in.FilePath)
	out := changeOut{Path: path, All: in.ReplaceAll}
	content, edits, err := planEdit(ctx, c, path, in, nil)
	if err != nil {
		return out, err
	}
	updated := apply(content, edits)
	out.Replaced = len(edits)
	out.Line = firstChangedLine(&content, updated)
	out.Diffs = diffs.FromEdits(path, content, edits)
	return out, nil
}

// planEdit reads the file and finds the edit's replacements in it; check,
// if any, judges the text read before anything is looked for in it.
func planEdit(ctx context.Context, c *registry.Call, path string, in editArgs, check func(content string) error) (string, []diffs.Edit, error) {
	if in.OldString == "" {
		return "", nil, registry.Errorf("FS_INVALID_EDIT", "old_string must not be empty; use write to create a file or replace all of it")
	}
	if in.OldString == in.NewString {
		return "", nil, registry.Errorf("FS_INVALID_EDIT", "old_string and new_string are identical; there is nothing to change")
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, iofs.ErrNotExist) && c.Files == nil:
		return "", nil, notFound(path)
	case err == nil && st.IsDir():
		return "", nil, registry.Errorf("FS_IS_DIRECTORY", fmt.Sprintf("%s is a directory, not a file", path))
	}
	content, err := readText(ctx, c, path, err == nil)
	if err != nil {
		return "", nil, err
	}
	if check != nil {
		if err := check(content); err != nil {
			return "", nil, err
		}
	}
	edits, err := findEdits(path, content, in.OldString, in.NewString, in.ReplaceAll)
	return content, edits, err
}

func runEdit(ctx context.Context, c *registry.Call, in editArgs) (changeOut, error) {
	path := resolve(c.Cwd, in.FilePath)
	out := changeOut{Path: path, All: in.ReplaceAll}
	content, edits, err := planEdit(ctx, c, path, in, func(content string) error { return checkFresh(c, "edit", path, content) })
	if err != nil {
		return out, err
	}
	updated := apply(content, edits)
	saved, err := writeText(ctx, c, path, updated)
	if err != nil {
		return out, err
	}
	out.Replaced = len(edits)
	out.Line = firstChangedLine(&content, saved)
	if out.Reformatted = reformatNote(path, updated, saved); out.Reformatted == "" {
		out.Diffs = diffs.FromEdits(path, content, edits)
	} else {
		out.Diffs = diffs.Compute(path, &content, saved)
	}
	return out, nil
}

// findEdits locates old in content and returns the replacements, shaped
// so the file keeps its line endings and its final-newline state. The model
// writes "\n" (read shows lines without "\r"); in a CRLF file both strings
// are matched and written with "\r\n".
func findEdits(path, content, old, new string, all bool) ([]diffs.Edit, error) {
	o, n := old, new
	if crlfFile(content) {
		o, n = toCRLF(old), toCRLF(new)
		if !strings.Contains(content, o) && strings.Contains(content, old) {
			o, n = old, new // a mixed file where the text really has bare "\n"
		}
	}
	count := strings.Count(content, o)
	switch {
	case count == 0:
		return nil, registry.Errorf("FS_EDIT_NOT_FOUND", fmt.Sprintf("old_string was not found in %q", path))
	case count > 1 && !all:
		return nil, registry.Errorf("FS_AMBIGUOUS_EDIT", fmt.Sprintf("old_string matched %d times in %q; provide a more specific old_string or set replace_all to true", count, path))
	}
	edits := make([]diffs.Edit, 0, count)
	for i := 0; ; {
		j := strings.Index(content[i:], o)
		if j < 0 {
			break
		}
		start := i + j
		edits = append(edits, diffs.Edit{Start: start, End: start + len(o), New: n})
		i = start + len(o)
	}
	// Only an edit that reaches the end of the file can change whether it
	// ends with a newline; put the original state back.
	last := &edits[len(edits)-1]
	if last.End == len(content) {
		hadNL := strings.HasSuffix(content, "\n")
		switch hasNL := strings.HasSuffix(last.New, "\n"); {
		case hadNL && !hasNL && (last.New != "" || last.Start > 0 && content[last.Start-1] != '\n'):
			last.New += lineEnding(content)
		case !hadNL && hasNL:
			last.New = strings.TrimSuffix(strings.TrimSuffix(last.New, "\n"), "\r")
		}
	}
	return edits, nil
}

// apply performs edits (ascending, non-overlapping) on content.
func apply(content string, edits []diffs.Edit) string {
	var b strings.Builder
	b.Grow(len(content))
	prev := 0
	for _, e := range edits {
		b.WriteString(content[prev:e.Start])
		b.WriteString(e.New)
		prev = e.End
	}
	b.WriteString(content[prev:])
	return b.String()
}

// crlfFile: most line breaks of the file are "\r\n".
func crlfFile(s string) bool {
	crlf := strings.Count(s, "\r\n")
	return crlf > 0 && crlf >= strings.Count(s, "\n")-crlf
}

func lineEnding(s string) string {
	if crlfFile(s) {
		return "\r\n"
	}
	return "\n"
}

// toCRLF writes every line break of s as "\r\n".
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}
