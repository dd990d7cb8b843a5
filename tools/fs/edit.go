package fs

import (
	"context"
	"errors"
	"fmt"
	"github.com/google/jsonschema-go/jsonschema"
	iofs "io/fs"
	"os"
	"slices"
	"sync"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs/match"
)

type editArgs struct {
	FilePath   string `json:"file_path" jsonschema:"The path of the file to edit, absolute or relative to the workspace root"`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"The text to replace it with (must differ from old_string)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string (default false)"`
	StartLine  int    `json:"start_line,omitempty" jsonschema:"The line where old_string starts, as read numbers it: when old_string occurs more than once, the occurrence starting there is replaced"`
}

func editTool() registry.Tool[editArgs, changeOut] {
	return registry.Tool[editArgs, changeOut]{
		Name:  "edit",
		Facts: registry.Facts{Edits: true, Kind: "edit"},
		Description: "Replace text in a file: old_string (literal, exactly as the file has it, without the \"N: \" line prefixes of read) " +
			"becomes new_string. old_string must occur exactly once unless replace_all is true or start_line names the line where the one meant starts. " +
			"Read the file in this session first. Line endings, a byte-order mark and the final newline are kept as the file has them.",
		Schema: func(s *jsonschema.Schema) {
			s.Properties["file_path"].MinLength = jsonschema.Ptr(1)
			s.Properties["start_line"].Minimum = jsonschema.Ptr(1.0)
		},
		Run: runEdit,
		Render: func(_ editArgs, out changeOut) []registry.Content {
			text := fmt.Sprintf("The file %s has been updated successfully.", out.Path)
			if out.All {
				text = fmt.Sprintf("The file %s has been updated. All occurrences were successfully replaced.", out.Path)
			}
			if out.Matched != "" {
				// The model learns its old_string was not exact, and how.
				text += fmt.Sprintf(" Note: old_string was not exact; it %s, and new_string was adapted to the file. The diff shows what was applied.", out.Matched)
			}
			return withNote(text, out)
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
	content, edits, note, err := planEdit(ctx, c, path, in, nil)
	if err != nil {
		return out, err
	}
	out.Matched = note
	updated := match.Apply(content, edits)
	out.Replaced = len(edits)
	out.Line = firstChangedLine(&content, updated)
	out.Diffs = diffs.FromEdits(path, content, edits)
	return out, nil
}

// planEdit reads the file and finds the edit's replacements in it; check,
// if any, judges the text read before anything is looked for in it.
func planEdit(ctx context.Context, c *registry.Call, path string, in editArgs, check func(content string) error) (content string, edits []diffs.Edit, note string, err error) {
	if in.OldString == "" {
		return "", nil, "", registry.Errorf("FS_INVALID_EDIT", "old_string must not be empty; use write to create a file or replace all of it")
	}
	if in.OldString == in.NewString {
		return "", nil, "", registry.Errorf("FS_INVALID_EDIT", "old_string and new_string are identical; there is nothing to change")
	}
	if in.StartLine > 0 && in.ReplaceAll {
		return "", nil, "", registry.Errorf("FS_INVALID_EDIT", "start_line picks one occurrence and replace_all replaces every one: give one of them")
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, iofs.ErrNotExist) && c.Files == nil:
		return "", nil, "", notFound(path)
	case err == nil && st.IsDir():
		return "", nil, "", registry.Errorf("FS_IS_DIRECTORY", fmt.Sprintf("%s is a directory, not a file", path))
	}
	content, err = readText(ctx, c, path, err == nil)
	if err != nil {
		return "", nil, "", err
	}
	if check != nil {
		if err := check(content); err != nil {
			return "", nil, "", err
		}
	}
	edits, note, err = findEdits(path, content, in.OldString, in.NewString, in.ReplaceAll, in.StartLine)
	return content, edits, note, err
}

func runEdit(ctx context.Context, c *registry.Call, in editArgs) (changeOut, error) {
	path := resolve(c.Cwd, in.FilePath)
	out := changeOut{Path: path, All: in.ReplaceAll}
	var before diffs.Version
	content, edits, note, err := planEdit(ctx, c, path, in, func(content string) error {
		before = diffs.VersionOf(content)
		return checkFresh(c, "edit", path, before.Hash)
	})
	if err != nil {
		return out, err
	}
	out.Matched = note
	updated := match.Apply(content, edits)
	saved, err := writeText(ctx, c, path, updated)
	if err != nil {
		return out, err
	}
	out.Replaced = len(edits)
	out.Line = firstChangedLine(&content, saved.Text)
	if out.Reformatted = reformatNote(path, updated, saved.Text); out.Reformatted == "" {
		out.Diffs = diffs.FromEdits(path, content, edits)
	} else {
		out.Diffs = diffs.Compute(path, &content, saved.Text)
	}
	out.Undo = diffs.Record(path, &before, saved, out.Diffs)
	return out, nil
}

// findEdits locates old in content through the matcher's cascade
// (tools/fs/match) and returns the replacements, shaped so the file keeps
// its line endings and its final-newline state, and how old was matched.
func findEdits(path, content, old, new string, all bool, at int) ([]diffs.Edit, string, error) {
	k := matchKey{path, content, old, new, all, at}
	a, ok := matches.take(k)
	r, err := a.r, a.err
	if !ok {
		r, err = findMatch(path, content, old, new, all, at)
		if err != nil || r.Tolerant() {
			matches.put(k, r, err)
		}
	}
	if err != nil {
		var ref *match.Refusal
		if errors.As(err, &ref) {
			return nil, "", registry.Errorf(ref.Code, ref.Message)
		}
		return nil, "", err
	}
	return r.Edits, r.Note(), nil
}

// findMatch is match.FindAt; a test counts the cascades walked through it.
var findMatch = match.FindAt

// matches keeps the matcher's last answers that walked more of the cascade
// than its exact step, for the run that follows a preview of the same edit
// (the agent previews an edit for its card and permission request, then
// runs it): the run finds the answer instead of walking the cascade again.
// An answer is reused only for the same path, arguments and file content,
// where the matcher, a pure function of them, would give it again, and
// once: the run takes it. An exact match is not kept: finding it costs
// about what comparing the content with the kept one would.
var matches matchMemo

type matchKey struct {
	path, content, old, new string
	all                     bool
	at                      int
}

type matchAnswer struct {
	key matchKey
	r   match.Result
	err error
}

// matchMemo holds the last few answers: previews of calls that never run
// (a user who refused them) are pushed out by later ones.
type matchMemo struct {
	mu      sync.Mutex
	answers []matchAnswer // oldest first
}

const keptMatches = 4

func (m *matchMemo) put(k matchKey, r match.Result, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.answers) == keptMatches {
		m.answers = slices.Delete(m.answers, 0, 1)
	}
	m.answers = append(m.answers, matchAnswer{k, r, err})
}

func (m *matchMemo) take(k matchKey) (matchAnswer, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range m.answers {
		if a.key == k {
			m.answers = slices.Delete(m.answers, i, i+1)
			a.r.Edits = slices.Clone(a.r.Edits)
			return a, true
		}
	}
	return matchAnswer{}, false
}
