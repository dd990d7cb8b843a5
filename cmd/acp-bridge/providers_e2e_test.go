package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// routeEndpoint is an OpenAI-compatible endpoint that lists models and
// answers every chat request with its name, keeping what each request
// asked for and with which Authorization header.
type routeEndpoint struct {
	name   string
	models []string
	mu     sync.Mutex
	got    []string // "model|Authorization" per chat request
}

func (e *routeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/models":
		var data []map[string]any
		for _, m := range e.models {
			data = append(data, map[string]any{"id": m, "object": "model"})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	case r.URL.Path == "/v1/chat/completions":
		var body struct{ Model string }
		json.NewDecoder(r.Body).Decode(&body)
		e.mu.Lock()
		e.got = append(e.got, body.Model+"|"+r.Header.Get("Authorization"))
		e.mu.Unlock()
		sseWrite(w, 1<<20, delta(`{"role":"assistant","content":"answered by `+e.name+`"}`, "stop"))
	default:
		http.NotFound(w, r)
	}
}

func (e *routeEndpoint) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

// TestBinaryClientProvider: through the real binary, an editor routes the
// bridge's provider to another endpoint with its own key (providers/set):
// the next model request goes there with that key, the endpoint's models
// join the picker, a refused set or disable changes nothing, and the key
// appears nowhere the bridge writes: not on stderr, not in the log file
// (at debug level), not in the state directory, not in the config
// directory. A restarted bridge is back on the configured endpoint: what
// the editor sets lives in its process only. Every message is checked
// against the schema (its unstable set when the checkout has it).
func TestBinaryClientProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	key := "sk-acpb-canary-" + hex.EncodeToString(rnd[:])

	configured := &routeEndpoint{name: "configured"}
	editors := &routeEndpoint{name: "the editor's endpoint", models: []string{"mock-b"}}
	srvA, srvB := httptest.NewServer(configured), httptest.NewServer(editors)
	defer srvA.Close()
	defer srvB.Close()

	// The newer schema beside the checkout only: the acp-go-sdk module's
	// copy has an older draft of providers/* (an "id" where the release
	// has "providerId"). Without it the messages go unchecked here.
	var check *acpschema.Checker
	if d, err := acpschema.Newer(); err != nil {
		t.Fatal(err)
	} else if d != "" {
		schema, err := acpschema.Load(filepath.Join(d, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		check = acpschema.NewChecker(schema)
	}
	dirs := t.TempDir()
	state, config, logFile := filepath.Join(dirs, "state"), filepath.Join(dirs, "config"), filepath.Join(dirs, "bridge.log")
	work := t.TempDir()
	start := func() (*rpcClient, func() string) {
		stdin, sc, stderr := startBinaryStderr(t, []string{"MOCK_KEY=sk-configured", "XDG_CONFIG_HOME=" + config, "XDG_STATE_HOME=" + state},
			"--base-url", srvA.URL+"/v1", "--model", "mock-1", "--api-key-env", "MOCK_KEY", "--retries", "0",
			"--state-dir", filepath.Join(state, "sessions"), "--log-file", logFile, "--log-level", "debug")
		c := &rpcClient{t: t, in: stdin, out: sc, tap: func(toAgent bool, line []byte) {
			if check == nil {
				return
			}
			dir := acpschema.FromAgent
			if toAgent {
				dir = acpschema.ToAgent
			}
			if err := check.Check(dir, line); err != nil {
				t.Errorf("not valid against the schema: %v\n%s", err, line)
			}
		}}
		return c, stderr
	}
	c, stderr := start()
	init := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if caps := init["agentCapabilities"].(map[string]any); caps["providers"] == nil {
		t.Fatalf("providers not advertised: %v", caps)
	}
	wantList := func(url string) any {
		return []any{map[string]any{"providerId": "endpoint", "supported": []any{"openai"}, "required": true,
			"current": map[string]any{"apiType": "openai", "baseUrl": url}}}
	}
	if d := cmp.Diff(wantList(srvA.URL+"/v1"), any(list(c))); d != "" {
		t.Errorf("providers/list as configured (-want +got):\n%s", d)
	}

	headers := map[string]any{"Authorization": "Bearer " + key}
	for _, bad := range []map[string]any{
		{"providerId": "endpoint", "apiType": "anthropic", "baseUrl": srvB.URL + "/v1", "headers": headers},
		{"providerId": "main", "apiType": "openai", "baseUrl": srvB.URL + "/v1", "headers": headers},
		{"providerId": "endpoint", "apiType": "openai", "baseUrl": "http://u:" + key + "@127.0.0.1/v1", "headers": headers},
	} {
		_, e := c.request("providers/set", bad)
		if e == nil || e.Code != -32602 || strings.Contains(e.Message, key) {
			t.Errorf("providers/set %v: %+v, want -32602 without the key", bad["providerId"], e)
		}
	}
	if _, e := c.request("providers/disable", map[string]any{"providerId": "endpoint"}); e == nil || e.Code != -32602 || !strings.Contains(e.Message, "required") {
		t.Errorf("disabling the required provider: %+v", e)
	}
	if d := cmp.Diff(wantList(srvA.URL+"/v1"), any(list(c))); d != "" {
		t.Errorf("refused calls changed the providers (-want +got):\n%s", d)
	}

	// A session open before the set sees the new endpoint's models join its
	// picker (config_option_update); one made after has them at once.
	early := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
	c.call("providers/set", map[string]any{"providerId": "endpoint", "apiType": "openai", "baseUrl": srvB.URL + "/v1", "headers": headers})
	if d := cmp.Diff(wantList(srvB.URL+"/v1"), any(list(c))); d != "" {
		t.Errorf("providers/list after the set (-want +got):\n%s", d)
	}
	sess := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	sid := sess["sessionId"]
	modelValues := func(opts []any) (out []string) {
		for _, o := range opts {
			if o := o.(map[string]any); o["id"] == "model" {
				for _, v := range o["options"].([]any) {
					out = append(out, v.(map[string]any)["value"].(string))
				}
			}
		}
		return out
	}
	both := []string{"endpoint/mock-1", "endpoint/mock-b"}
	if d := cmp.Diff(both, modelValues(sess["configOptions"].([]any))); d != "" {
		t.Errorf("the picker of a new session (-want +got):\n%s", d)
	}
	var earlyPicker []string
	for _, n := range c.notes {
		if u := n["update"].(map[string]any); n["sessionId"] == early && u["sessionUpdate"] == "config_option_update" {
			earlyPicker = modelValues(u["configOptions"].([]any))
		}
	}
	if d := cmp.Diff(both, earlyPicker); d != "" {
		t.Errorf("the picker of the session open before the set (-want +got):\n%s", d)
	}
	prompt := func(text string) {
		t.Helper()
		res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
		if res["stopReason"] != "end_turn" {
			t.Fatalf("stopReason %v; thread:\n%s", res["stopReason"], c.agentText())
		}
	}
	prompt("hello")
	c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "endpoint/mock-b"})
	prompt("again")
	want := []string{"mock-1|Bearer " + key, "mock-b|Bearer " + key}
	if d := cmp.Diff(want, editors.requests()); d != "" {
		t.Errorf("the editor's endpoint saw (-want +got):\n%s", d)
	}
	if got := configured.requests(); len(got) != 0 {
		t.Errorf("the configured endpoint still got requests: %v", got)
	}
	if text := c.agentText(); strings.Count(text, "answered by the editor's endpoint") != 2 {
		t.Errorf("the thread: %s", text)
	}

	// A new process: the editor's route is gone with the old one.
	c2, stderr2 := start()
	c2.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if d := cmp.Diff(wantList(srvA.URL+"/v1"), any(list(c2))); d != "" {
		t.Errorf("providers/list after a restart (-want +got):\n%s", d)
	}
	c2.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}})

	// Everything the bridge wrote: every answer above came after its log
	// lines and session events were written.
	leaks := func(where, text string) {
		if strings.Contains(text, key) {
			i := strings.Index(text, key)
			t.Errorf("the key appears in %s: ...%s...", where, text[max(0, i-200):min(len(text), i+len(key)+50)])
		}
	}
	leaks("stderr", stderr())
	leaks("the second process's stderr", stderr2())
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), "provider set by the client") {
		t.Errorf("the log file does not record the set at all:\n%s", logged)
	}
	leaks("the log file", string(logged))
	files := 0
	for _, dir := range []string{state, config} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				t.Error(err)
				return nil
			}
			defer f.Close()
			files++
			b, _ := io.ReadAll(bufio.NewReader(f))
			leaks(path, string(b))
			return nil
		})
	}
	if files == 0 {
		t.Errorf("no file in the state directory: the session was not saved, so the check saw nothing")
	}
}

// TestBinaryProviderWithoutEnvironment: a bridge started with no settings
// and no key at all (DeepSeek by default) is configured by the editor
// alone: providers/set gives the endpoint and the key, the endpoint's
// model joins the picker, and a turn on it is answered there.
func TestBinaryProviderWithoutEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	editors := &routeEndpoint{name: "the editor's endpoint", models: []string{"llama3"}}
	srv := httptest.NewServer(editors)
	defer srv.Close()
	c := startE2E(t, nil, "--state-dir", "")
	if got := list(c); len(got) != 1 || got[0].(map[string]any)["providerId"] != "deepseek" {
		t.Fatalf("providers/list with no settings: %v", got)
	}
	c.call("providers/set", map[string]any{"providerId": "deepseek", "apiType": "openai", "baseUrl": srv.URL + "/v1",
		"headers": map[string]any{"Authorization": "Bearer sk-from-the-editor"}})
	sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
	c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "deepseek/llama3"})
	res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if res["stopReason"] != "end_turn" {
		t.Fatalf("stopReason %v; thread:\n%s", res["stopReason"], c.agentText())
	}
	if d := cmp.Diff([]string{"llama3|Bearer sk-from-the-editor"}, editors.requests()); d != "" {
		t.Errorf("the editor's endpoint saw (-want +got):\n%s", d)
	}
}

func list(c *rpcClient) []any {
	c.t.Helper()
	l, _ := c.call("providers/list", map[string]any{})["providers"].([]any)
	return l
}
