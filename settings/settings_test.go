package settings

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/rules"
)

func TestCompile(t *testing.T) {
	s, err := Parse([]byte(`permissions:
  allow: ["Bash(go test:*)"]
  deny: ["Read(./.env)", "Bash()"]
hooks:
  PreToolUse:
    - matcher: bash
      command: ./check.sh
      timeout: 5s
    - command: ""
  Sometime:
    - command: x
timeouts:
  bash: 2m
  mcp__github: 30s
  edit: soon
`))
	if err != nil {
		t.Fatal(err)
	}
	p, errs := s.Compile(rules.Source{Kind: "user", Path: "/home/u/.config/acp-bridge/config.yaml"}, "/w")
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{"permissions.deny[1]", "hooks.PreToolUse[1]", "hooks.Sometime", "timeouts.edit"}
	if len(got) != len(want) {
		t.Fatalf("errors = %q, want one each for %q", got, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("error %d = %q, want it about %s", i, got[i], w)
		}
	}
	if len(p.Rules) != 2 || len(p.Hooks) != 1 || p.Hooks[0].Timeout != 5*time.Second {
		t.Errorf("compiled %d rules, hooks %+v", len(p.Rules), p.Hooks)
	}
	// Each limit names where it was set, so a call it stops can say so.
	const in = " in /home/u/.config/acp-bridge/config.yaml"
	for tool, want := range map[string]Limit{"bash": {2 * time.Minute, "timeouts.bash" + in}, "Bash": {2 * time.Minute, "timeouts.bash" + in},
		"mcp__github__search": {30 * time.Second, "timeouts.mcp__github" + in}, "mcp__gitlab__x": {}, "read": {}} {
		if got := p.Timeout(tool); got != want {
			t.Errorf("Timeout(%s) = %+v, want %+v", tool, got, want)
		}
	}
}

func TestParseRefusesUnknownKeys(t *testing.T) {
	for _, doc := range []string{"permisions: {}\n", "permissions:\n  alow: [x]\n", "hooks: [x]\n"} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("Parse(%q) = nil error", doc)
		}
	}
	if s, err := Parse([]byte("# nothing yet\n")); err != nil || !s.Empty() {
		t.Errorf("an empty file: %+v, %v", s, err)
	}
}

// The fingerprint covers what needs trust (allow rules, hooks), not the
// file's layout or its deny rules.
func TestProjectFingerprint(t *testing.T) {
	root := t.TempDir()
	write := func(s string) Project {
		t.Helper()
		os.MkdirAll(filepath.Join(root, ".acp-bridge"), 0o755)
		if err := os.WriteFile(filepath.Join(root, ProjectFile), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := LoadProject(root)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p, err := LoadProject(t.TempDir()); err != nil || p.Path != "" {
		t.Errorf("no file: %+v, %v", p, err)
	}
	a := write("permissions:\n  allow: [\"Bash(ls)\"]\n  deny: [\"Bash(rm:*)\"]\n")
	b := write("# reformatted\npermissions: {deny: [\"Bash(rm:*)\", \"Read(.env)\"], allow: [\"Bash(ls)\"]}\n")
	c := write("permissions:\n  allow: [\"Bash(ls:*)\"]\n")
	d := write("permissions:\n  deny: [\"Bash(rm:*)\"]\n")
	if a.Fingerprint == "" || a.Fingerprint != b.Fingerprint || a.Fingerprint == c.Fingerprint || d.Fingerprint != "" {
		t.Errorf("fingerprints: %q %q %q %q", a.Fingerprint, b.Fingerprint, c.Fingerprint, d.Fingerprint)
	}
	e := write("hooks:\n  Stop:\n    - command: say done\n")
	if e.Fingerprint == "" || len(e.Untrusted.Hooks) != 1 {
		t.Errorf("a hook needs trust: %+v", e)
	}
}

func TestMemory(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	root := "/some/project"
	var wg sync.WaitGroup
	for _, r := range []string{"Bash(go test:*)", "Bash(make:*)", "Bash(go test:*)"} {
		wg.Go(func() {
			if err := st.Remember(root, rules.Allow, r); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := st.Trust(root, "abc"); err != nil {
		t.Fatal(err)
	}
	m, err := st.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Allow) != 2 || m.Trusted != "abc" || m.Project != root {
		t.Errorf("memory = %+v", m)
	}
	rs, errs := m.Rules(st.Path(root))
	if len(errs) != 0 || len(rs) != 2 || rs[0].Source.Kind != "remembered" || rs[0].Root != root {
		t.Errorf("rules = %+v, %v", rs, errs)
	}
	if found, err := st.Forget(root, "Bash(make:*)"); !found || err != nil {
		t.Errorf("Forget = %v, %v", found, err)
	}
	if found, _ := st.Forget(root, "Bash(make:*)"); found {
		t.Errorf("forgot twice")
	}
	m, _ = st.Load(root)
	if diff := cmp.Diff([]string{"Bash(go test:*)"}, m.Allow); diff != "" {
		t.Errorf("after Forget (-want +got):\n%s", diff)
	}
	if other, _ := st.Load("/another"); len(other.Allow) != 0 || other.Trusted != "" {
		t.Errorf("another project shares the memory: %+v", other)
	}

	// The commands that run outside the sandbox are a list of their own:
	// they allow nothing, and forgetting one leaves an allow rule of the
	// same text.
	for _, r := range []string{"Bash(go test:*)", "Bash(go test:*)", "Bash(touch:*)"} {
		if err := st.RememberOutside(root, r); err != nil {
			t.Fatal(err)
		}
	}
	m, _ = st.Load(root)
	if diff := cmp.Diff([]string{"Bash(go test:*)", "Bash(touch:*)"}, m.Outside); diff != "" {
		t.Errorf("outside (-want +got):\n%s", diff)
	}
	if rs, _ := m.Rules(st.Path(root)); len(rs) != 1 {
		t.Errorf("the outside list joined the rules: %+v", rs)
	}
	if out, errs := m.OutsideRules(st.Path(root)); len(errs) != 0 || len(out) != 2 || out[1].Text != "Bash(touch:*)" || out[1].Root != root {
		t.Errorf("outside rules = %+v, %v", out, errs)
	}
	if found, err := st.ForgetOutside(root, "Bash(go test:*)"); !found || err != nil {
		t.Errorf("ForgetOutside = %v, %v", found, err)
	}
	m, _ = st.Load(root)
	if diff := cmp.Diff([]string{"Bash(go test:*)"}, m.Allow); diff != "" || len(m.Outside) != 1 {
		t.Errorf("after ForgetOutside: allow (-want +got):\n%s outside %q", diff, m.Outside)
	}
}
