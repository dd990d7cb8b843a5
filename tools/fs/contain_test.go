package fs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestContainment(t *testing.T) {
	e := newEnv(t, nil)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	extra, _ := filepath.EvalSymlinks(t.TempDir()) // an additional root
	e.write("inside.txt", "ok\n")
	mustSymlink(t, secret, e.path("link-out.txt"))                                        // file link leading out
	mustSymlink(t, outside, e.path("dir-out"))                                            // directory link leading out
	mustSymlink(t, e.path("inside.txt"), e.path("link-in.txt"))                           // link staying in
	mustSymlink(t, filepath.Join(outside, "new.txt"), e.path("dangling"))                 // dangling, to outside
	mustSymlink(t, filepath.Join(e.dir, "..", filepath.Base(outside)), e.path("rel-out")) // relative escape

	tests := []struct {
		tool    string
		args    args
		ask     bool
		keyPath string // the resolved path the permission names
	}{
		{"read", args{"file_path": "inside.txt"}, false, ""},
		{"read", args{"file_path": "link-in.txt"}, false, ""},
		{"read", args{"file_path": secret}, true, secret},
		{"read", args{"file_path": "link-out.txt"}, true, secret},
		{"read", args{"file_path": "dir-out/secret.txt"}, true, secret},
		{"read", args{"file_path": "../" + filepath.Base(outside) + "/secret.txt"}, true, secret},
		{"read", args{"file_path": "rel-out/secret.txt"}, true, secret},
		{"read", args{"file_path": filepath.Join(extra, "x.txt")}, false, ""},
		{"write", args{"file_path": "dangling", "content": "x"}, true, filepath.Join(outside, "new.txt")},
		{"write", args{"file_path": "dir-out/made/up.txt", "content": "x"}, true, filepath.Join(outside, "made/up.txt")},
		{"edit", args{"file_path": "link-out.txt", "old_string": "s", "new_string": "t"}, true, secret},
		{"grep", args{"pattern": "x", "path": "dir-out"}, true, outside},
		{"glob", args{"pattern": "*", "path": outside}, true, outside},
		{"glob", args{"pattern": outside + "/**/*.txt"}, true, outside},
		{"grep", args{"pattern": "x"}, false, ""},
	}
	for _, tt := range tests {
		c := e.call(tt.tool, tt.args)
		c.Roots = append(c.Roots, extra)
		p := e.scope.Get(tt.tool).Permission(c)
		isMutation := tt.tool == "write" || tt.tool == "edit"
		switch {
		case tt.ask && p == nil:
			t.Errorf("%s %v: no permission asked for a path outside the roots", tt.tool, tt.args)
		case tt.ask && !strings.HasSuffix(p.Key, ":"+tt.keyPath):
			t.Errorf("%s %v: key %q, want it to name %s", tt.tool, tt.args, p.Key, tt.keyPath)
		case tt.ask && !strings.Contains(p.Reason, "outside the workspace"):
			t.Errorf("%s %v: reason %q", tt.tool, tt.args, p.Reason)
		case !tt.ask && isMutation && (p == nil || p.Key != "edit:"+e.dir):
			t.Errorf("%s %v: inside edits ask with the workspace key, got %+v", tt.tool, tt.args, p)
		case !tt.ask && !isMutation && p != nil:
			t.Errorf("%s %v: asked %+v for a path inside the roots", tt.tool, tt.args, p)
		}
	}
	// Inside edits ask too (edits are asked by default) with one key for the workspace.
	p := e.scope.Get("edit").Permission(e.call("edit", args{"file_path": "inside.txt", "old_string": "o", "new_string": "k"}))
	if p == nil || p.Key != "edit:"+e.dir || p.Subject != "edits in this workspace" {
		t.Errorf("inside edit permission %+v", p)
	}
}

// TestGrepDoesNotFollowLinksOut: a workspace search never reads a file
// through a symlink that leads outside the roots.
func TestGrepDoesNotFollowLinksOut(t *testing.T) {
	e := newEnv(t, nil)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("needle outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.write("in.txt", "needle inside\n")
	mustSymlink(t, filepath.Join(outside, "secret.txt"), e.path("link.txt"))
	mustSymlink(t, outside, e.path("dir"))
	mustSymlink(t, e.path("in.txt"), e.path("alias.txt"))
	r := e.mustRun("grep", args{"pattern": "needle"})
	if strings.Contains(r.Text(), "outside") {
		t.Errorf("grep read through a link out of the workspace:\n%s", r.Text())
	}
	if !strings.Contains(r.Text(), e.path("alias.txt")+":") || !strings.Contains(r.Text(), e.path("in.txt")+":") {
		t.Errorf("grep should read in.txt and a link staying inside:\n%s", r.Text())
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
