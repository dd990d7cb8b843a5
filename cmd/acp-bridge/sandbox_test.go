package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/sandbox"
)

// Bad sandbox settings are refused with what is wrong and where, from
// every place a setting comes from.
func TestSandboxSettings(t *testing.T) {
	dir := t.TempDir()
	file := func(body string) string {
		p := filepath.Join(dir, strings.NewReplacer(" ", "", ":", "", "\n", "").Replace(body)+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string // in the error; "" for none
		mode sandbox.Mode
	}{
		{"default", nil, "", "", sandbox.WorkspaceWrite},
		{"flag", []string{"--sandbox", "off"}, "", "", sandbox.Off},
		{"env", nil, "read-only", "", sandbox.ReadOnly},
		{"flag over env", []string{"--sandbox", "workspace-write"}, "off", "", sandbox.WorkspaceWrite},
		{"bad flag", []string{"--sandbox", "nope"}, "", `--sandbox: unknown sandbox mode "nope"`, ""},
		{"bad env", nil, "x", `ACP_BRIDGE_SANDBOX: unknown sandbox mode "x"`, ""},
		{"bad file", []string{"--config", file("sandbox:\n  mode: loose\n")}, "", `sandbox.mode: unknown sandbox mode "loose"`, ""},
		{"unknown key", []string{"--config", file("sandbox:\n  netwrk: true\n")}, "", `unknown key "sandbox.netwrk"`, ""},
		{"file", []string{"--config", file("sandbox:\n  mode: read-only\n  network: true\n")}, "", "", sandbox.ReadOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("ACP_BRIDGE_SANDBOX", tc.env)
			cfg, _, err := parseFlags("acp-bridge", tc.args, nil)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.sandbox.mode(); got != tc.mode {
				t.Errorf("mode %s, want %s", got, tc.mode)
			}
		})
	}
	if _, err := agentSandbox(&config{sandbox: sandboxConfig{Writable: []string{"rel/dir"}}}, ""); err == nil {
		t.Error("a relative sandbox.writable was taken")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	os.MkdirAll(filepath.Join(home, "cache"), 0o755)
	sb, err := agentSandbox(&config{sandbox: sandboxConfig{Writable: []string{"~/cache", "~/missing"}}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(sb.Writable) != 1 || !strings.HasSuffix(sb.Writable[0], "/cache") || sb.TempDir == "" {
		t.Errorf("writable %v, temp dir %q: want ~/cache only (~/missing does not exist) and a temp dir", sb.Writable, sb.TempDir)
	}
}
