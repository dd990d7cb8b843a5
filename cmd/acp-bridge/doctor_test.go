//go:build unix

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor runs `acp-bridge doctor` on broken and working setups: each
// problem is named on its line with a fix and the exit status is 1; a
// working setup (a local endpoint that takes the key and lists the model)
// exits 0. The key itself is never printed. (Unix: the broken cases use
// /proc and a PATH without bash.)
func TestDoctor(t *testing.T) {
	ep := &keyEndpoint{good: "sk-doctor-5b1e"}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") != "json" || strings.HasPrefix(r.URL.Path, "/nojson") {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Write([]byte(`{"results":[{"url":"https://a.example/","title":"A","content":"a"}]}`))
	}))
	defer searx.Close()
	dead := httptest.NewServer(ep)
	deadURL := dead.URL + "/v1"
	dead.Close()

	tests := []struct {
		name    string
		config  string // the default config file's content; "" for none
		profile string // a user profile file's content; "" for none
		env     map[string]string
		args    []string
		code    int
		want    []string // substrings of the output, in any order
	}{
		{name: "working setup", env: map[string]string{"OPENAI_API_KEY": ep.good},
			args: []string{"--base-url", srv.URL + "/v1", "--model", "m1"}, code: 0,
			want: []string{"ok   config", "ok   key      for " + srv.URL + "/v1 from the environment variable OPENAI_API_KEY",
				"ok   endpoint " + srv.URL + "/v1 answers and lists m1", "ok   profiles subagents: explorer, general", "ok   state", "ok   bash", "ok   version  acp-bridge ", "Everything"}},
		{name: "broken profile", env: map[string]string{"OPENAI_API_KEY": ep.good}, args: []string{"--base-url", srv.URL + "/v1", "--model", "m1"},
			profile: "---\nname: reviewer\ncolour: red\n---\n", code: 1,
			want: []string{"FAIL profiles", "reviewer.md: front matter:", "colour", "Fix: correct the files named"}},
		{name: "broken config", config: "model: [unclosed\n", code: 1,
			want: []string{"FAIL config", "config.yaml", "Fix: correct the setting", "ok   state"}},
		{name: "misspelt config key", config: "modle: deepseek-chat\n", code: 1,
			want: []string{"FAIL config", "modle", "Fix:"}},
		{name: "missing key", code: 1,
			want: []string{"FAIL key      no API key for https://api.deepseek.com (DEEPSEEK_API_KEY is not set and none is stored). Fix: run acp-bridge login",
				"skip endpoint"}},
		{name: "dead endpoint", env: map[string]string{"MY_KEY": "x"}, args: []string{"--base-url", deadURL, "--model", "m1", "--api-key-env", "MY_KEY"}, code: 1,
			want: []string{"ok   key      for " + deadURL + " from the environment variable MY_KEY", "FAIL endpoint " + deadURL + " does not answer", "Fix: check the network"}},
		{name: "rejected key", env: map[string]string{"OPENAI_API_KEY": "sk-wrong"}, args: []string{"--base-url", srv.URL + "/v1", "--model", "m1"}, code: 1,
			want: []string{"FAIL endpoint", "rejected the key (HTTP 401)", "Fix: run acp-bridge login"}},
		{name: "model not listed", env: map[string]string{"OPENAI_API_KEY": ep.good}, args: []string{"--base-url", srv.URL + "/v1", "--model", "m9"}, code: 1,
			want: []string{`does not list the model "m9" (2 models: m1, m2)`, "Fix: choose a model"}},
		{name: "unwritable state dir", env: map[string]string{"OPENAI_API_KEY": ep.good, "ACP_BRIDGE_STATE_DIR": "/proc/acp-bridge-doctor"},
			args: []string{"--base-url", srv.URL + "/v1", "--model", "m1"}, code: 1,
			want: []string{"FAIL state    cannot create /proc/acp-bridge-doctor", "Fix: make /proc/acp-bridge-doctor writable"}},
		{name: "search service", env: map[string]string{"OPENAI_API_KEY": ep.good}, args: []string{"--base-url", srv.URL + "/v1", "--model", "m1"},
			config: "web:\n  search:\n    searxng: " + searx.URL + "\n", code: 0,
			want: []string{"ok   search   SearxNG at " + searx.URL + "/search answers (1 results for a test query)"}},
		{name: "search service without json", env: map[string]string{"OPENAI_API_KEY": ep.good}, args: []string{"--base-url", srv.URL + "/v1", "--model", "m1"},
			config: "web:\n  search:\n    searxng: " + searx.URL + "/nojson\n", code: 1,
			want: []string{"FAIL search   SearxNG at " + searx.URL + "/nojson/search: SearxNG answered 403 Forbidden: the instance does not serve JSON; add json to search.formats"}},
		{name: "brave key unset", env: map[string]string{"OPENAI_API_KEY": ep.good}, args: []string{"--base-url", srv.URL + "/v1", "--model", "m1"},
			config: "web:\n  search:\n    brave_api_key_env: MY_BRAVE_KEY_UNSET\n", code: 1,
			want: []string{"FAIL search   MY_BRAVE_KEY_UNSET is not set", "Fix: set MY_BRAVE_KEY_UNSET"}},
		{name: "no bash", env: map[string]string{"OPENAI_API_KEY": ep.good, "PATH": "/nonexistent"},
			args: []string{"--base-url", srv.URL + "/v1", "--model", "m1"}, code: 1,
			want: []string{"FAIL bash     bash was not found on PATH"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for _, k := range []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ACP_BRIDGE_MODEL", "ACP_BRIDGE_CONFIG"} {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", home)
			t.Setenv("XDG_STATE_HOME", home)
			t.Setenv("ACP_BRIDGE_STATE_DIR", filepath.Join(home, "sessions"))
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if tt.config != "" {
				os.MkdirAll(filepath.Join(home, "acp-bridge"), 0o700)
				os.WriteFile(filepath.Join(home, "acp-bridge", "config.yaml"), []byte(tt.config), 0o600)
			}
			if tt.profile != "" {
				os.MkdirAll(filepath.Join(home, "acp-bridge", "agents"), 0o700)
				os.WriteFile(filepath.Join(home, "acp-bridge", "agents", "reviewer.md"), []byte(tt.profile), 0o600)
			}
			var out, errOut strings.Builder
			code := run(context.Background(), append([]string{"doctor"}, tt.args...), nil, &out, &errOut)
			if code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if strings.Contains(out.String()+errOut.String(), ep.good) {
				t.Errorf("doctor printed the key")
			}
			if t.Failed() {
				t.Logf("output:\n%s\nstderr:\n%s", out.String(), errOut.String())
			}
		})
	}
}
