package fs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// The agent's Files implements the extension the fs tools look for.
var _ fs.Tracker = (*agent.Files)(nil)

// fakeEditor serves fs/* like Zed: unsaved buffers win over the disk, and
// a write lands in the buffer and is saved. It records every request.
type fakeEditor struct {
	mu      sync.Mutex
	buffers map[string]string
	reads   []string
	writes  []acp.WriteTextFileRequest
	refuse  bool // answer every fs request with resource_not_found
	// zed: answer a file that is neither a buffer nor on disk with an
	// empty text, as Zed does (it opens an empty new buffer).
	zed bool
	// format, when set, is applied to a write before it is saved (Zed's
	// format on save).
	format func(string) string
}

func (e *fakeEditor) SessionUpdate(context.Context, string, acp.Update) error { return nil }
func (e *fakeEditor) RequestPermission(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: "no"}
}

func (e *fakeEditor) ReadTextFile(_ context.Context, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads = append(e.reads, req.Path)
	if e.refuse {
		return nil, &acp.Error{Code: acp.CodeResourceNotFound, Message: "not in a worktree"}
	}
	if b, ok := e.buffers[req.Path]; ok {
		return &acp.ReadTextFileResponse{Content: b}, nil
	}
	data, err := os.ReadFile(req.Path)
	if os.IsNotExist(err) && e.zed {
		return &acp.ReadTextFileResponse{Content: ""}, nil
	}
	if err != nil {
		return nil, &acp.Error{Code: acp.CodeResourceNotFound, Message: err.Error()}
	}
	return &acp.ReadTextFileResponse{Content: string(data)}, nil
}

func (e *fakeEditor) WriteTextFile(_ context.Context, req *acp.WriteTextFileRequest) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes = append(e.writes, *req)
	if e.refuse {
		return &acp.Error{Code: acp.CodeResourceNotFound, Message: "not in a worktree"}
	}
	delete(e.buffers, req.Path)
	content := req.Content
	if e.format != nil {
		content = e.format(content)
	}
	return os.WriteFile(req.Path, []byte(content), 0o644)
}

func (e *fakeEditor) readCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.reads)
}

// env is one session's worth of tools over a temp workspace.
type env struct {
	t     *testing.T
	dir   string
	scope *registry.Scope
	files registry.Files // nil: the tools use the disk
	pipe  *pipeline.Pipeline
}

// newEnv gives a workspace whose session tracks reads (agent.Files) over
// the disk; editor, when non-nil, is offered for reads and writes.
func newEnv(t *testing.T, editor *fakeEditor) *env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := registry.New()
	fs.Register(r)
	var client acp.Client
	caps := acp.FileSystemCapabilities{}
	if editor != nil {
		client, caps = editor, acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
	}
	return &env{t: t, dir: dir, scope: r.NewScope(), files: agent.NewFiles(client, "sess", caps, nil), pipe: pipeline.New(nil)}
}

func (e *env) call(name string, args any) *registry.Call {
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	return &registry.Call{ID: "c", Name: name, Args: raw, Cwd: e.dir, Roots: []string{e.dir}, Files: e.files}
}

// run executes a tool through the pipeline (validation, error results).
func (e *env) run(name string, args any) registry.Result {
	e.t.Helper()
	d := e.scope.Get(name)
	if d == nil {
		e.t.Fatalf("no tool %q", name)
	}
	return e.pipe.Execute(e.t.Context(), d, e.call(name, args))
}

func (e *env) mustRun(name string, args any) registry.Result {
	e.t.Helper()
	r := e.run(name, args)
	if r.IsError {
		e.t.Fatalf("%s %v: %s", name, args, r.Text())
	}
	return r
}

func (e *env) path(rel string) string { return filepath.Join(e.dir, rel) }

func (e *env) write(rel, content string) string {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

type args = map[string]any
