package fs

import (
	"context"
	"errors"
	"fmt"
	"github.com/google/jsonschema-go/jsonschema"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
)

type writeArgs struct {
	FilePath string `json:"file_path" jsonschema:"The path of the file to write, absolute or relative to the workspace root"`
	Content  string `json:"content" jsonschema:"The complete new content of the file"`
}

func writeTool() registry.Tool[writeArgs, changeOut] {
	return registry.Tool[writeArgs, changeOut]{
		Name:  "write",
		Facts: registry.Facts{Edits: true, Kind: "edit"},
		Description: "Create a file or replace its whole content. Parent directories are created. " +
			"Overwriting an existing file requires reading it first in this session; prefer edit for changes to existing files.",
		Schema: func(s *jsonschema.Schema) { s.Properties["file_path"].MinLength = jsonschema.Ptr(1) },
		Run:    runWrite,
		Render: func(_ writeArgs, out changeOut) []registry.Content {
			verb := "Updated file"
			if out.Created {
				verb = "Created file"
			}
			return withNote(fmt.Sprintf("<path>%s</path>\n<type>file</type>\n<content>\n%s\n</content>", out.Path, verb), out)
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
		Preview: previewWrite,
		Permission: func(c *registry.Call, in writeArgs) *registry.Permission {
			return editPermission(c, resolve(c.Cwd, in.FilePath))
		},
	}
}

// editPermission asks about every mutation. Inside the roots, "always"
// covers edits anywhere in the workspace; outside, only that path.
func editPermission(c *registry.Call, path string) *registry.Permission {
	if p := outsidePermission(c, path, "edit"); p != nil {
		return p
	}
	return &registry.Permission{Reason: "edit " + path, Key: "edit:" + c.Cwd, Subject: "edits in this workspace", Rule: "Edit(./**)"}
}

// previewWrite is the write as it would change the file as it is now: a
// new file whole, an existing one as hunks with context.
func previewWrite(ctx context.Context, c *registry.Call, in writeArgs) (changeOut, error) {
	path := resolve(c.Cwd, in.FilePath)
	out := changeOut{Path: path}
	var old *string
	switch st, err := os.Stat(path); {
	case errors.Is(err, iofs.ErrNotExist):
		out.Created = true
	case err != nil:
		return out, err
	case st.IsDir():
		return out, registry.Errorf("FS_IS_DIRECTORY", fmt.Sprintf("%s is a directory, not a file", path))
	default:
		cur, err := readText(ctx, c, path, true)
		if err != nil {
			return out, err
		}
		old = &cur
	}
	out.Diffs = diffs.Compute(path, old, in.Content)
	out.Line = firstChangedLine(old, in.Content)
	return out, nil
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
	var old *diffs.Version
	if !out.Created {
		cur, err := readText(ctx, c, path, true)
		if err != nil {
			return out, err
		}
		v := diffs.VersionOf(cur)
		if err := checkFresh(c, "write", path, v.Hash); err != nil {
			return out, err
		}
		old = &v
	}
	// The editor creates the file but not necessarily its directories.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return out, registry.Errorf("FS_ERROR", err.Error())
	}
	saved, err := writeText(ctx, c, path, in.Content)
	if err != nil {
		return out, err
	}
	var oldText *string
	if old != nil {
		oldText = &old.Text
	}
	out.Diffs = diffs.Compute(path, oldText, saved.Text)
	out.Undo = diffs.Record(path, old, saved, out.Diffs)
	out.Line = firstChangedLine(oldText, saved.Text)
	out.Reformatted = reformatNote(path, in.Content, saved.Text)
	return out, nil
}

// checkFresh enforces read-before-write: the session must have read path,
// and the content of hash (what is there now) must be the version it
// read. Without a tracker there is no session state to check against.
func checkFresh(c *registry.Call, verb, path, hash string) error {
	t := tracker(c)
	if t == nil {
		return nil
	}
	seen, current := t.ReadState(path, hash)
	switch {
	case !seen:
		return registry.Errorf("FS_NOT_OBSERVED", fmt.Sprintf("%s requires reading %q first — read the file, then retry", verb, path))
	case !current:
		return registry.Errorf("FS_STALE_VERSION", fmt.Sprintf("%s requires reading %q first: the file changed since it was read — re-read the file, then retry", verb, path))
	}
	return nil
}
