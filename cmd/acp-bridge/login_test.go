package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// keyEndpoint is an OpenAI-compatible endpoint that takes one key: /models
// lists its model, chat answers "hello" and records the key it was sent.
type keyEndpoint struct {
	good string
	mu   sync.Mutex
	sent []string // Authorization of each chat request
}

func (e *keyEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	switch r.URL.Path {
	case "/v1/models":
		if auth != "Bearer "+e.good {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"object":"list","data":[{"id":"m1","object":"model"},{"id":"m2","object":"model"}]}`))
	case "/v1/chat/completions":
		e.mu.Lock()
		e.sent = append(e.sent, auth)
		e.mu.Unlock()
		sseWrite(w, 1<<20, delta(`{"role":"assistant","content":"hello"}`, ""), delta(`{}`, "stop"))
	default:
		http.NotFound(w, r)
	}
}

func (e *keyEndpoint) keys() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.sent...)
}

// runCLI runs the bridge binary (the test binary as main) with args and
// stdin, in an environment of its own: home is HOME and XDG_CONFIG_HOME.
func runCLI(t *testing.T, home, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append([]string{"ACP_BRIDGE_AS_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home,
		"XDG_STATE_HOME=" + home, "TMPDIR=" + os.TempDir()}, append(sandboxEnv(), env...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

// TestLoginThroughTheBinary: `acp-bridge login` over a stdin pipe checks
// the key against /models, refuses a bad one, stores a good one in a 0600
// file (never echoing it), the next bridge process sends it, a key in the
// environment wins, and `acp-bridge logout` removes it.
func TestLoginThroughTheBinary(t *testing.T) {
	ep := &keyEndpoint{good: "sk-stored-7f3a"}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	base := srv.URL + "/v1"
	home := t.TempDir()
	store := filepath.Join(home, "acp-bridge", "credentials.json")

	out, errOut, code := runCLI(t, home, base+"\nsk-wrong\n", nil, "login")
	if code != 1 || !strings.Contains(errOut, "rejected the key (HTTP 401)") || !strings.Contains(errOut, "nothing stored") {
		t.Errorf("login with a bad key: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Fatalf("a refused key was stored (%v)", err)
	}

	out, errOut, code = runCLI(t, home, base+"\n"+ep.good+"\n", nil, "login")
	if code != 0 {
		t.Fatalf("login: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, want := range []string{"Provider", "not shown", "ok (2 models: m1, m2)", store, "--base-url " + base} {
		if !strings.Contains(out, want) {
			t.Errorf("login output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, ep.good) {
		t.Errorf("login printed the key:\n%s%s", out, errOut)
	}
	b, err := os.ReadFile(store)
	if err != nil || !strings.Contains(string(b), ep.good) {
		t.Fatalf("stored file: %q, %v", b, err)
	}
	if st, _ := os.Stat(store); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Errorf("stored file mode %v, want 0600", st.Mode().Perm())
	}

	// The next process uses the stored key; a key in the environment wins.
	for _, tt := range []struct {
		name string
		env  []string
		want string
	}{
		{"stored key", nil, "Bearer " + ep.good},
		{"environment wins", []string{"OPENAI_API_KEY=sk-from-env"}, "Bearer sk-from-env"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(ep.keys())
			logFile := filepath.Join(t.TempDir(), "bridge.log")
			prompt := `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"SID","prompt":[{"type":"text","text":"hi"}]}}`
			in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"auth":{"terminal":true}}}}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + t.TempDir() + `","mcpServers":[]}}` + "\n"
			out := converse(t, home, tt.env, in, prompt, "--base-url", base, "--model", "m1", "--log-level", "debug", "--log-file", logFile)
			if !strings.Contains(out, `"authMethods":[{"id":"login"`) || !strings.Contains(out, `"type":"terminal"`) || !strings.Contains(out, `"logout":{}`) {
				t.Errorf("initialize does not offer the terminal login and logout:\n%s", out)
			}
			if !strings.Contains(out, `"stopReason":"end_turn"`) {
				t.Errorf("the prompt did not complete:\n%s", out)
			}
			if got := ep.keys(); len(got) != before+1 || got[before] != tt.want {
				t.Errorf("chat requests sent %v, want one with %q", got[before:], tt.want)
			}
			if log, _ := os.ReadFile(logFile); strings.Contains(string(log), ep.good) || strings.Contains(string(log), "sk-from-env") {
				t.Errorf("the log holds a key")
			}
		})
	}

	out, _, code = runCLI(t, home, "", nil, "logout")
	if code != 0 || !strings.Contains(out, "Removed") {
		t.Errorf("logout: exit %d: %s", code, out)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("logout left the key file (%v)", err)
	}
	if out, _, _ = runCLI(t, home, "", nil, "logout"); !strings.Contains(out, "No stored keys") {
		t.Errorf("second logout: %s", out)
	}
}

// converse runs the bridge, sends in, then prompt with the session id of
// the session/new answer in place of SID, and returns everything it wrote
// until the prompt's answer.
func converse(t *testing.T, home string, env []string, in, prompt string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append([]string{"ACP_BRIDGE_AS_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home,
		"XDG_STATE_HOME=" + home}, append(sandboxEnv(), env...)...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("the bridge did not exit")
		}
	}()
	stdin.Write([]byte(in))
	var all strings.Builder
	// Requests run concurrently, so initialize may be answered after the
	// prompt: the conversation is over when both answers are in.
	initialized, prompted := false, false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line + "\n")
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		json.Unmarshal([]byte(line), &m)
		switch string(m.ID) {
		case "2":
			stdin.Write([]byte(strings.Replace(prompt, "SID", m.Result.SessionID, 1) + "\n"))
		case "1":
			initialized = true
		case "3":
			prompted = true
		}
		if initialized && prompted {
			return all.String()
		}
	}
	t.Fatalf("the bridge stopped before answering the prompt; stderr:\n%s", stderr.String())
	return ""
}

func TestProviderURL(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"", "https://api.deepseek.com", ""},
		{"DeepSeek", "https://api.deepseek.com", ""},
		{"https://API.openai.com/v1/", "https://api.openai.com/v1", ""},
		{"http://localhost:11434/v1", "http://localhost:11434/v1", ""},
		{"api.openai.com", "", "not a base URL"},
		{"ftp://x/v1", "", "not a base URL"},
	} {
		got, err := providerURL(tt.in)
		if got != tt.want || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("providerURL(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestRegistryAuthCheck sends the initialize of the ACP Registry's checker
// (terminal and the older _meta "terminal-auth", no auth capability, an
// empty HOME): the answer offers at least one method of type terminal, with
// the command to run for that older convention.
func TestRegistryAuthCheck(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	home := t.TempDir()
	cmd.Env = append([]string{"ACP_BRIDGE_AS_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=dumb"}, sandboxEnv()...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,`+
		`"clientInfo":{"name":"ACP Registry Validator","version":"1.0.0"},"clientCapabilities":{"terminal":true,`+
		`"fs":{"readTextFile":true,"writeTextFile":true},"_meta":{"terminal_output":true,"terminal-auth":true}}}}`+"\n")
	out, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result struct {
			AuthMethods []struct {
				ID, Type string
				Meta     map[string]struct {
					Command string
					Args    []string
				} `json:"_meta"`
			}
		}
	}
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ms := resp.Result.AuthMethods
	if len(ms) != 1 || ms[0].Type != "terminal" || ms[0].Meta["terminal-auth"].Command == "" || ms[0].Meta["terminal-auth"].Args[0] != "login" {
		t.Errorf("authMethods %+v, want the terminal login with its command", ms)
	}
}
