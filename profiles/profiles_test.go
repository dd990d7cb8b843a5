package profiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, file string
		want       Profile
		err        string // a part of the error; "" for none
	}{
		{name: "list and body", file: "---\nname: reviewer\ndescription: Reviews a change\ntools: [read, grep]\nmodel: small\n---\nYou review.\n",
			want: Profile{Name: "reviewer", Description: "Reviews a change", Tools: []string{"read", "grep"}, Model: "small", Instructions: "You review.", Source: "f.md"}},
		{name: "comma string, CRLF, BOM", file: "\ufeff---\r\nname: a\r\ndescription: d\r\ntools: read, glob\r\ndisallowedTools: bash\r\nreadOnly: true\r\n---\r\n",
			want: Profile{Name: "a", Description: "d", Tools: []string{"read", "glob"}, Deny: []string{"bash"}, ReadOnly: true, Source: "f.md"}},
		{name: "empty allow list hides every tool", file: "---\nname: a\ndescription: d\ntools: []\n---\n",
			want: Profile{Name: "a", Description: "d", Tools: []string{}, Source: "f.md"}},
		{name: "no front matter", file: "You review.\n", err: "must start with front matter"},
		{name: "unclosed", file: "---\nname: a\n", err: "no closing"},
		{name: "unknown key", file: "---\nname: a\ndescription: d\ncolour: red\n---\n", err: "field colour not found"},
		{name: "no name", file: "---\ndescription: d\n---\n", err: "no name"},
		{name: "empty front matter", file: "---\n---\nbody\n", err: "no name"},
		{name: "bad name", file: "---\nname: Big Name\ndescription: d\n---\n", err: `name "Big Name"`},
		{name: "no description", file: "---\nname: a\n---\n", err: "no description"},
		{name: "tools not names", file: "---\nname: a\ndescription: d\ntools: {read: 1}\n---\n", err: "tools: line 4"},
		{name: "bad yaml", file: "---\nname: [a\ndescription: d\n---\n", err: "front matter:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("f.md", []byte(tt.file))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "f.md") {
					t.Fatalf("err = %v, want one naming f.md and saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("profile (-want +got):\n%s", d)
			}
		})
	}
}

func TestLoadLayers(t *testing.T) {
	user, proj := t.TempDir(), t.TempDir()
	write := func(dir, name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(user, "rev.md", "---\nname: reviewer\ndescription: user's\n---\n")
	write(user, "explorer.md", "---\nname: explorer\ndescription: the user's explorer\ntools: read\n---\n")
	write(proj, "rev.md", "---\nname: reviewer\ndescription: project's\ndisallowedTools: bash\n---\n")
	write(proj, "broken.md", "---\nname: broken\n---\n")
	write(proj, "z-dup.md", "---\nname: reviewer\ndescription: again\n---\n")
	write(proj, "notes.txt", "not a profile")
	write(proj, "slow.md", "---\nname: slow\ndescription: d\nmodel: nonesuch\n---\n")
	check := func(p Profile) error {
		if p.Model == "nonesuch" {
			return errors.New("no model nonesuch")
		}
		return nil
	}
	s, errs := Load(check, Dir{Path: user, Kind: "user"}, Dir{Path: proj, Kind: "project"}, Dir{Path: filepath.Join(proj, "absent"), Kind: "project"})
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	if len(msgs) != 3 || !strings.Contains(msgs[0], "broken.md") || !strings.Contains(msgs[1], "slow.md: no model nonesuch; it is left out") ||
		!strings.Contains(msgs[2], "z-dup.md") || !strings.Contains(msgs[2], "taken by") {
		t.Errorf("errors = %q", msgs)
	}
	var names []string
	for _, p := range s.List() {
		names = append(names, p.Name+"="+filepath.Base(p.Source))
	}
	if d := cmp.Diff([]string{"explorer=explorer.md", "general=built-in", "reviewer=rev.md"}, names); d != "" {
		t.Errorf("profiles (-want +got):\n%s", d)
	}
	if p, _ := s.Get("reviewer"); p.Source != filepath.Join(proj, "rev.md") || len(p.Deny) != 1 {
		t.Errorf("reviewer = %+v", p)
	}
}

func TestBuiltins(t *testing.T) {
	s, errs := Load(nil)
	if errs != nil {
		t.Fatal(errs)
	}
	ex, ok := s.Get("explorer")
	if !ok || !ex.ReadOnly || ex.Tools != nil {
		t.Errorf("explorer = %+v: read-only by the tools' facts, not by a list", ex)
	}
	if g, ok := s.Get("general"); !ok || g.ReadOnly || g.Tools != nil || g.Deny != nil {
		t.Errorf("general = %+v", g)
	}
}
