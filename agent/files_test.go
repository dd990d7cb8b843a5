package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/bash"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

var (
	_ fs.Tracker       = (*agent.Files)(nil)
	_ bash.DiskChanges = (*agent.Files)(nil)
	_ registry.Files   = (*agent.Files)(nil)
)

// editor is an independent ACP client's file side: it serves unsaved
// buffers and records writes (keeping them as buffers, unsaved, so a test
// can tell an editor write from a disk write).
type editor struct {
	mu      sync.Mutex
	buffers map[string]string
	reads   []string
	writes  map[string]string
	refuse  bool
}

func newEditor() *editor { return &editor{buffers: map[string]string{}, writes: map[string]string{}} }

func (e *editor) SessionUpdate(context.Context, string, acp.Update) error { return nil }
func (e *editor) RequestPermission(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return &acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}, nil
}

func (e *editor) ReadTextFile(_ context.Context, r *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads = append(e.reads, r.Path)
	if e.refuse {
		return nil, &acp.Error{Code: acp.CodeResourceNotFound, Message: "outside the worktree"}
	}
	if b, ok := e.buffers[r.Path]; ok {
		return &acp.ReadTextFileResponse{Content: b}, nil
	}
	b, err := os.ReadFile(r.Path)
	if err != nil {
		return nil, &acp.Error{Code: acp.CodeResourceNotFound, Message: err.Error()}
	}
	return &acp.ReadTextFileResponse{Content: string(b)}, nil
}

func (e *editor) WriteTextFile(_ context.Context, r *acp.WriteTextFileRequest) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.refuse {
		return &acp.Error{Code: acp.CodeResourceNotFound, Message: "outside the worktree"}
	}
	e.writes[r.Path] = r.Content
	e.buffers[r.Path] = r.Content
	return nil
}

func (e *editor) readsOf(p string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, r := range e.reads {
		if r == p {
			n++
		}
	}
	return n
}

type session struct {
	t     *testing.T
	dir   string
	files *agent.Files
	scope *registry.Scope
}

func newSession(t *testing.T, ed *editor, caps acp.FileSystemCapabilities) *session {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	r := registry.New()
	fs.Register(r)
	bash.Register(r)
	var client acp.Client
	if ed != nil {
		client = ed
	}
	return &session{t: t, dir: dir, files: agent.NewFiles(client, "s1", caps, nil), scope: r.NewScope()}
}

func (s *session) run(name string, args map[string]any) registry.Result {
	s.t.Helper()
	raw, _ := json.Marshal(args)
	c := &registry.Call{ID: "c", Name: name, Args: raw, Cwd: s.dir, Roots: []string{s.dir}, Files: s.files}
	r := pipeline.New(nil).Execute(s.t.Context(), s.scope.Get(name), c)
	if r.IsError {
		s.t.Fatalf("%s %v: %s", name, args, r.Text())
	}
	return r
}

var both = acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}

func TestReadSeesUnsavedBuffer(t *testing.T) {
	ed := newEditor()
	s := newSession(t, ed, both)
	p := filepath.Join(s.dir, "a.txt")
	os.WriteFile(p, []byte("on disk\n"), 0o644)
	ed.buffers[p] = "unsaved in the editor\n"
	if r := s.run("read", map[string]any{"file_path": "a.txt"}); !strings.Contains(r.Text(), "1: unsaved in the editor") {
		t.Errorf("read did not see the buffer: %s", r.Text())
	}
	// An edit works on the buffer and goes back through the editor.
	s.run("edit", map[string]any{"file_path": "a.txt", "old_string": "unsaved", "new_string": "edited"})
	if ed.writes[p] != "edited in the editor\n" {
		t.Errorf("editor writes %q", ed.writes)
	}
	if b, _ := os.ReadFile(p); string(b) != "on disk\n" {
		t.Errorf("the disk was written behind the editor: %q", b)
	}
}

func TestFilesChangedByCommandAreReadFromDisk(t *testing.T) {
	ed := newEditor()
	s := newSession(t, ed, both)
	p := filepath.Join(s.dir, "gen.txt")
	other := filepath.Join(s.dir, "other.txt")
	os.WriteFile(p, []byte("v1\n"), 0o644)
	os.WriteFile(other, []byte("disk other\n"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(other, old, old)
	ed.buffers[p] = "v1\n" // the editor has the file open, clean
	ed.buffers[other] = "buffer other\n"
	s.run("read", map[string]any{"file_path": "gen.txt"})
	// The agent's command rewrites the file; the editor's buffer is stale.
	s.run("bash", map[string]any{"command": "echo v2 > gen.txt"})
	before := ed.readsOf(p)
	if r := s.run("read", map[string]any{"file_path": "gen.txt"}); !strings.Contains(r.Text(), "1: v2") {
		t.Errorf("read after bash: %s", r.Text())
	}
	if ed.readsOf(p) != before {
		t.Errorf("a file the command changed was read through the editor")
	}
	// A file the command did not touch still comes from the editor.
	if r := s.run("read", map[string]any{"file_path": "other.txt"}); !strings.Contains(r.Text(), "buffer other") {
		t.Errorf("untouched file not read through the editor: %s", r.Text())
	}
	// Once the user saves something else over it, the editor is the source again.
	newer := time.Now().Add(time.Hour)
	os.Chtimes(p, newer, newer)
	ed.buffers[p] = "user's version\n"
	if r := s.run("read", map[string]any{"file_path": "gen.txt"}); !strings.Contains(r.Text(), "user's version") {
		t.Errorf("after a later save: %s", r.Text())
	}
}

func TestDiskWriteWhenEditorOnlyReads(t *testing.T) {
	ed := newEditor()
	s := newSession(t, ed, acp.FileSystemCapabilities{ReadTextFile: true})
	p := filepath.Join(s.dir, "w.txt")
	ed.buffers[p] = "stale buffer\n" // the editor has not reloaded yet
	os.WriteFile(p, []byte("x\n"), 0o644)
	s.run("read", map[string]any{"file_path": "w.txt"})
	s.run("write", map[string]any{"file_path": "w.txt", "content": "written\n"})
	if b, _ := os.ReadFile(p); string(b) != "written\n" {
		t.Fatalf("disk %q", b)
	}
	if len(ed.writes) != 0 {
		t.Errorf("the editor was asked to write: %v", ed.writes)
	}
	if !s.files.ChangedOnDisk(p) {
		t.Errorf("our own disk write is not remembered")
	}
	if r := s.run("read", map[string]any{"file_path": "w.txt"}); !strings.Contains(r.Text(), "1: written") {
		t.Errorf("read after own disk write went to the stale buffer: %s", r.Text())
	}
}

func TestEditorRefusalFallsBackToDisk(t *testing.T) {
	ed := newEditor()
	ed.refuse = true
	s := newSession(t, ed, both)
	p := filepath.Join(s.dir, "x.txt")
	os.WriteFile(p, []byte("disk\n"), 0o644)
	if r := s.run("read", map[string]any{"file_path": "x.txt"}); !strings.Contains(r.Text(), "1: disk") {
		t.Errorf("read %s", r.Text())
	}
	s.run("write", map[string]any{"file_path": "x.txt", "content": "new\n"})
	if b, _ := os.ReadFile(p); string(b) != "new\n" {
		t.Errorf("disk %q", b)
	}
}

func TestWriteThroughEditor(t *testing.T) {
	ed := newEditor()
	s := newSession(t, ed, both)
	r := s.run("write", map[string]any{"file_path": "sub/new.go", "content": "package sub\n"})
	p := filepath.Join(s.dir, "sub/new.go")
	if ed.writes[p] != "package sub\n" {
		t.Errorf("editor writes %v", ed.writes)
	}
	if _, err := os.Stat(filepath.Dir(p)); err != nil {
		t.Errorf("parent directory not created: %v", err)
	}
	if !strings.Contains(r.Text(), "Created file") {
		t.Errorf("text %q", r.Text())
	}
}

func TestReadTracking(t *testing.T) {
	f := agent.NewFiles(nil, "s", acp.FileSystemCapabilities{}, nil)
	if seen, _ := f.ReadState("/a", diffs.Hash("x")); seen {
		t.Error("unread file seen")
	}
	f.MarkRead("/a", diffs.Hash("x"))
	if seen, cur := f.ReadState("/a", diffs.Hash("x")); !seen || !cur {
		t.Error("read file not current")
	}
	if seen, cur := f.ReadState("/a/../a", diffs.Hash("y")); !seen || cur {
		t.Error("changed content still current (or path not cleaned)")
	}
}

// TestSessionUsesEditorFiles drives a whole turn through the agent: the
// session hands its Files to the tools, so the model reads the unsaved
// buffer and its edit reaches the editor, not the disk.
func TestSessionUsesEditorFiles(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	p := filepath.Join(dir, "main.go")
	os.WriteFile(p, []byte("package main // saved\n"), 0o644)
	ed := newEditor()
	ed.buffers[p] = "package main // unsaved\n"
	reg := registry.New()
	fs.Register(reg)
	script := `{"responses":[
	  {"parts":[{"tool_call":{"name":"read","arguments":{"file_path":"main.go"}}}]},
	  {"parts":[{"tool_call":{"name":"edit","arguments":{"file_path":"main.go","old_string":"unsaved","new_string":"edited"}}}]},
	  {"parts":[{"text":"done"}]}]}`
	m, err := model.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(ed, agent.Options{Registry: reg, Model: m})
	ctx := t.Context()
	if _, err := a.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1,
		ClientCapabilities: acp.ClientCapabilities{FS: both}}); err != nil {
		t.Fatal(err)
	}
	s, err := a.NewSession(ctx, &acp.NewSessionRequest{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(ctx, &acp.PromptRequest{SessionID: s.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("fix it")}}); err != nil {
		t.Fatal(err)
	}
	a.Shutdown()
	if ed.readsOf(p) == 0 {
		t.Errorf("the session never asked the editor for %s", p)
	}
	if got := ed.writes[p]; got != "package main // edited\n" {
		t.Errorf("editor write %q, want the unsaved buffer edited", got)
	}
	if b, _ := os.ReadFile(p); string(b) != "package main // saved\n" {
		t.Errorf("disk changed behind the editor: %q", b)
	}
}

// A file over EditorReadMax is read from disk, never asked of the editor;
// one at the limit still goes through it.
func TestLargeFileReadFromDisk(t *testing.T) {
	for _, tt := range []struct {
		size       int
		fromEditor bool
	}{{agent.EditorReadMax, true}, {agent.EditorReadMax + 1, false}} {
		ed := newEditor()
		f := agent.NewFiles(ed, "s1", both, nil)
		p := filepath.Join(t.TempDir(), "big.txt")
		if err := os.WriteFile(p, []byte(strings.Repeat("x", tt.size)), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := f.ReadText(t.Context(), p)
		if err != nil || len(got) != tt.size {
			t.Fatalf("size %d: read %d bytes, %v", tt.size, len(got), err)
		}
		if n := ed.readsOf(p); (n == 1) != tt.fromEditor {
			t.Errorf("size %d: %d editor reads, want through the editor %v", tt.size, n, tt.fromEditor)
		}
	}
}
