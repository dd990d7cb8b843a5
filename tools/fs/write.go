package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
)

type writeArgs struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// changeOut is what a file mutation returns: the file and the hunks it
// applied, which the result stores so the card needs no I/O.
type changeOut struct {
	Path     string              `json:"path"`
	Created  bool                `json:"created,omitempty"`
	Replaced int                 `json:"replaced,omitempty"` // edit: occurrences replaced
	All      bool                `json:"all,omitempty"`      // edit: replace_all was set
	Diffs    []registry.FileDiff `json:"diffs"`
}

func writeTool() registry.Tool[writeArgs, changeOut] {
	return registry.Tool[writeArgs, changeOut]{
		Name:  "write",
		Facts: registry.Facts{Edits: true, Kind: "edit"},
		Description: "Create a file or replace its whole content. Parent directories are created. " +
			"Overwriting an existing file requires reading it first in this session; prefer edit for changes to existing files.",
		Parameters: []byte(`{"type":"object","properties":{` +
			`"file_path":{"type":"string","minLength":1,"description":"The path of the file to write, absolute or relative to the workspace root"},` +
			`"content":{"type":"string","description":"The complete new content of the file"}},` +
			`"required":["file_path","content"],"additionalProperties":false}`),
		Run: runWrite,
		Render: func(_ writeArgs, out changeOut) []registry.Content {
			verb := "Updated file"
			if out.Created {
				verb = "Created file"
			}
			return []registry.Content{registry.Text(fmt.Sprintf("<path>%s</path>\n<type>file</type>\n<content>\n%s\n</content>", out.Path, verb))}
		},
		Meta: func(_ writeArgs, out changeOut) any { return changeMeta(out) },
		PresentCall: func(in writeArgs) registry.View {
			return registry.DiffCard{Title: "Write " + in.FilePath,
				Diffs:     []registry.FileDiff{{Path: in.FilePath, NewText: in.Content}},
				Locations: []registry.Location{{Path: in.FilePath}}}
		},
		PresentResult: func(in writeArgs, r registry.Result) registry.View {
			return changeCard("Write "+in.FilePath, in.FilePath, r)
		},
		Permission: func(c *registry.Call, in writeArgs) *registry.Permission {
			return editPermission(c, resolve(c.Cwd, in.FilePath))
		},
	}
}

// changeMeta is the display data of a mutation: the applied hunks.
func changeMeta(out changeOut) any {
	return struct {
		Created bool                `json:"created,omitempty"`
		Diffs   []registry.FileDiff `json:"diffs"`
	}{out.Created, out.Diffs}
}

// changeCard shows the applied hunks stored with the result; a failed call
// has none and shows its error text instead.
func changeCard(title, path string, r registry.Result) registry.View {
	if r.IsError {
		return nil
	}
	var m struct {
		Diffs []registry.FileDiff `json:"diffs"`
	}
	if json.Unmarshal(r.Meta, &m) != nil {
		return nil
	}
	return registry.DiffCard{Title: title, Diffs: m.Diffs, Locations: []registry.Location{{Path: path}}}
}

// editPermission asks about every mutation. Inside the roots, "always"
// covers edits anywhere in the workspace; outside, only that path.
func editPermission(c *registry.Call, path string) *registry.Permission {
	if p := outsidePermission(c, path, "edit"); p != nil {
		return p
	}
	return &registry.Permission{Reason: "edit " + path, Key: "edit:" + c.Cwd, Subject: "edits in this workspace"}
}

func runWrite(ctx context.Context, c *registry.Call, in writeArgs) (changeOut, error) {
	path := resolve(c.Cwd, in.FilePath)
	out := changeOut{Path: path}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		out.Created = true
	case err != nil:
		return out, registry.Errorf("FS_ERROR", err.Error())
	case st.IsDir():
		return out, registry.Errorf("FS_IS_DIRECTORY", fmt.Sprintf("%s is a directory, not a file", path))
	}
	f := files(c)
	var old *string
	if !out.Created {
		cur, err := f.ReadText(ctx, path)
		if err != nil {
			return out, registry.Errorf("FS_ERROR", fmt.Sprintf("could not read %s: %v", path, err))
		}
		if err := checkFresh(c, "write", path, cur); err != nil {
			return out, err
		}
		old = &cur
	}
	// The editor creates the file but not necessarily its directories.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return out, registry.Errorf("FS_ERROR", err.Error())
	}
	if err := f.WriteText(ctx, path, in.Content); err != nil {
		return out, registry.Errorf("FS_ERROR", fmt.Sprintf("could not write %s: %v", path, err))
	}
	if t := tracker(c); t != nil {
		t.MarkRead(path, in.Content)
	}
	out.Diffs = diffs.Compute(path, old, in.Content)
	return out, nil
}

// checkFresh enforces read-before-write: the session must have read path,
// and content (what is there now) must be the version it read. Without a
// tracker there is no session state to check against.
func checkFresh(c *registry.Call, verb, path, content string) error {
	t := tracker(c)
	if t == nil {
		return nil
	}
	seen, current := t.ReadState(path, content)
	switch {
	case !seen:
		return registry.Errorf("FS_NOT_OBSERVED", fmt.Sprintf("%s requires reading %q first — read the file, then retry", verb, path))
	case !current:
		return registry.Errorf("FS_STALE_VERSION", fmt.Sprintf("%s requires reading %q first: the file changed since it was read — re-read the file, then retry", verb, path))
	}
	return nil
}
