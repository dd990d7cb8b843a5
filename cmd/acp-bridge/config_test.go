package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/model"
)

func TestConfigLayers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	full := write("full.yaml", `
model: ollama/qwen3:8b
permission_mode: plan
tools:
  mode: both
providers:
  ollama:
    base_url: http://localhost:11434/v1
    models:
      - name: qwen3:8b
        context_window: 32768
        images: true
      - {name: llama3.2, display_name: Llama}
  deepseek:
    base_url: https://api.deepseek.com
    models:
      - name: deepseek-chat
        price: {input: 0.27, output: 1.1, currency: USD}
limits:
  max_turn_requests: 7
  max_tokens: 4096
  retries: 2
  stream_idle_timeout: 45s
log:
  level: debug
`)
	typo := write("typo.yaml", "permision_mode: plan\n")
	script := write("script.json", `{"responses":[{"parts":[{"text":"hi"}]}]}`)

	type want struct {
		def, keyEnv, baseURL string
		requireKey           bool
		models               int
		mode, tools          string
		maxTurn, maxTokens   int
		idle                 time.Duration
		ctxWindow            int
		images               bool
		price                bool
	}
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    want
		wantErr string
	}{
		{name: "defaults: DeepSeek", want: want{def: "deepseek/deepseek-chat", keyEnv: "DEEPSEEK_API_KEY", baseURL: "https://api.deepseek.com",
			requireKey: true, models: 2, mode: "ask", tools: "native", maxTurn: 50, ctxWindow: 128000, maxTokens: 8192}},
		{name: "a DeepSeek model by name", args: []string{"--model", "deepseek-reasoner"}, want: want{def: "deepseek/deepseek-reasoner",
			keyEnv: "DEEPSEEK_API_KEY", baseURL: "https://api.deepseek.com", requireKey: true, models: 2, mode: "ask", tools: "native", maxTurn: 50, ctxWindow: 128000}},
		{name: "local endpoint by flag: no key required", args: []string{"--base-url", "http://localhost:11434/v1", "--model", "qwen3", "--context-window", "8192", "--images"},
			want: want{def: "endpoint/qwen3", keyEnv: "OPENAI_API_KEY", baseURL: "http://localhost:11434/v1", models: 1, mode: "ask", tools: "native", maxTurn: 50, ctxWindow: 8192, images: true}},
		{name: "OpenAI by environment", env: map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1", "ACP_BRIDGE_MODEL": "gpt-4.1"},
			want: want{def: "openai/gpt-4.1", keyEnv: "OPENAI_API_KEY", baseURL: "https://api.openai.com/v1", requireKey: true, models: 1, mode: "ask", tools: "native", maxTurn: 50}},
		{name: "--api-key-env names the key", args: []string{"--base-url", "http://gpu:8000/v1", "--model", "m", "--api-key-env", "VLLM_KEY"},
			want: want{def: "endpoint/m", keyEnv: "VLLM_KEY", baseURL: "http://gpu:8000/v1", requireKey: true, models: 1, mode: "ask", tools: "native", maxTurn: 50}},
		{name: "DeepSeek base URL keeps the DeepSeek defaults", args: []string{"--base-url", "https://api.deepseek.com/beta"},
			want: want{def: "deepseek/deepseek-chat", keyEnv: "DEEPSEEK_API_KEY", baseURL: "https://api.deepseek.com/beta", requireKey: true, models: 2, mode: "ask", tools: "native", maxTurn: 50, ctxWindow: 128000, maxTokens: 8192}},
		{name: "config file", args: []string{"--config", full},
			want: want{def: "ollama/qwen3:8b", keyEnv: "OPENAI_API_KEY", baseURL: "http://localhost:11434/v1", models: 3, mode: "plan", tools: "both",
				maxTurn: 7, maxTokens: 4096, idle: 45 * time.Second, ctxWindow: 32768, images: true}},
		{name: "environment and flags override the file", env: map[string]string{"ACP_BRIDGE_CONFIG": full, "ACP_BRIDGE_PERMISSION_MODE": "bypass"},
			args: []string{"--model", "deepseek/deepseek-chat", "--max-turn-requests", "9", "--tools-mode", "native"},
			want: want{def: "deepseek/deepseek-chat", keyEnv: "DEEPSEEK_API_KEY", baseURL: "https://api.deepseek.com", requireKey: true, models: 3, mode: "bypass",
				tools: "native", maxTurn: 9, maxTokens: 4096, idle: 45 * time.Second, price: true}},
		{name: "scripted model", args: []string{"--model", "script:" + script}, want: want{def: "script:script.json", models: 1, mode: "ask", tools: "native", maxTurn: 50}},
		{name: "--base-url needs --model", args: []string{"--base-url", "http://localhost:1234/v1"}, wantErr: "--base-url is set to http://localhost:1234/v1, but no model is named"},
		{name: "OPENAI_BASE_URL needs a model, and says so by name", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:1234/v1"}, wantErr: "OPENAI_BASE_URL is set to"},
		{name: "a bad OPENAI_BASE_URL names the variable", env: map[string]string{"OPENAI_BASE_URL": "localhost:1234"}, wantErr: `OPENAI_BASE_URL="localhost:1234" is not an http(s) URL`},
		{name: "negative --retries", args: []string{"--retries", "-1"}, wantErr: "--retries must be 0 or more, not -1"},
		{name: "negative --context-window", args: []string{"--context-window", "-5"}, wantErr: "--context-window must be 0 or more"},
		{name: "tools_mode at the top level", args: []string{"--config", write("tm.yaml", "tools_mode: code\n")}, wantErr: `line 1: unknown key "tools_mode": it is set as tools: {mode: native|code|both}`},
		{name: "a wrong type names the key, not a Go type", args: []string{"--config", write("ty.yaml", "limits:\n  retries: many\n")}, wantErr: `line 2: limits.retries should be a whole number, not "many"`},
		{name: "an unknown key inside a provider", args: []string{"--config", write("pk.yaml", "providers:\n  local:\n    url: http://x\n")}, wantErr: `line 3: unknown key "providers.local.url" (known here: base_url, api_key_env, models)`},
		{name: "a negative limit in the file", args: []string{"--config", write("neg.yaml", "limits: {retries: -2}\n")}, wantErr: "must be 0 or more"},
		{name: "misspelt key in the file", args: []string{"--config", typo}, wantErr: "permision_mode"},
		{name: "missing explicit file", args: []string{"--config", filepath.Join(dir, "nope.yaml")}, wantErr: "no such file"},
		{name: "bad permission mode", args: []string{"--permission-mode", "yolo"}, wantErr: "unknown permission mode"},
		{name: "bad tools mode", env: map[string]string{"ACP_BRIDGE_TOOLS_MODE": "magic"}, wantErr: "unknown tools mode"},
		{name: "bad base URL", args: []string{"--base-url", "localhost:11434", "--model", "m"}, wantErr: `--base-url "localhost:11434" is not an http(s) URL`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"ACP_BRIDGE_CONFIG", "ACP_BRIDGE_MODEL", "OPENAI_BASE_URL", "ACP_BRIDGE_PERMISSION_MODE", "ACP_BRIDGE_TOOLS_MODE",
				"ACP_BRIDGE_MAX_TURN_REQUESTS", "ACP_BRIDGE_LOG_LEVEL", "ACP_BRIDGE_LOG_FILE"} {
				t.Setenv(k, "")
			}
			t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no default file
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, _, err := parseFlags("acp-bridge", tc.args, io.Discard)
			var models []modelChoiceView
			def := ""
			if err == nil {
				var ms []modelChoiceView
				ms, def, err = viewChoices(cfg)
				models = ms
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "main.") || strings.Contains(err.Error(), "!!") {
					t.Errorf("err = %v names Go or YAML internals", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := tc.want
			if def != w.def || len(models) != w.models || cfg.permissionMode != w.mode || cfg.toolsMode != w.tools || cfg.maxTurn != w.maxTurn {
				t.Fatalf("default %q, %d models, mode %s, tools %s, maxTurn %d; want %q %d %s %s %d",
					def, len(models), cfg.permissionMode, cfg.toolsMode, cfg.maxTurn, w.def, w.models, w.mode, w.tools, w.maxTurn)
			}
			var d *modelChoiceView
			for i := range models {
				if models[i].id == def {
					d = &models[i]
				}
			}
			if d == nil {
				t.Fatalf("the default %s is not among the choices", def)
			}
			if d.ctxWindow != w.ctxWindow || d.images != w.images || d.price != w.price {
				t.Errorf("default model: window %d images %v price %v; want %d %v %v", d.ctxWindow, d.images, d.price, w.ctxWindow, w.images, w.price)
			}
			if d.openai != nil {
				o := d.openai.Options()
				if o.APIKeyEnv != w.keyEnv || o.BaseURL != w.baseURL || o.RequireKey != w.requireKey || o.MaxTokens != w.maxTokens {
					t.Errorf("provider: keyEnv %s base %s requireKey %v maxTokens %d; want %s %s %v %d", o.APIKeyEnv, o.BaseURL, o.RequireKey, o.MaxTokens, w.keyEnv, w.baseURL, w.requireKey, w.maxTokens)
				}
				if w.idle != 0 && o.IdleTimeout != w.idle {
					t.Errorf("idle timeout %v, want %v", o.IdleTimeout, w.idle)
				}
			}
		})
	}
}

type modelChoiceView struct {
	id        string
	ctxWindow int
	images    bool
	price     bool
	openai    *model.OpenAI
}

func viewChoices(cfg *config) ([]modelChoiceView, string, error) {
	ms, def, err := cfg.modelChoices()
	var out []modelChoiceView
	for _, m := range ms {
		v := modelChoiceView{id: m.ID, ctxWindow: m.ContextWindow, images: m.Images, price: m.Price != nil}
		p := m.Provider
		for u, ok := p.(interface{ Unwrap() model.Provider }); ok; u, ok = p.(interface{ Unwrap() model.Provider }) {
			p = u.Unwrap() // retries, then the route table
		}
		v.openai, _ = p.(*model.OpenAI)
		out = append(out, v)
	}
	return out, def, err
}

func TestHelpDocumentsEverySetting(t *testing.T) {
	var b strings.Builder
	_, _, err := parseFlags("acp-bridge", []string{"--help"}, &b)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	help := b.String()
	for _, s := range []string{"-config", "-model", "-base-url", "-api-key-env", "-permission-mode", "-tools-mode", "-max-turn-requests",
		"-max-tokens", "-context-window", "-images", "-retries", "-stream-idle-timeout", "-log-level", "-log-file",
		"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ACP_BRIDGE_CONFIG", "providers:", "limits:", "price:", "permission_mode:", "tools:"} {
		if !strings.Contains(help, s) {
			t.Errorf("--help does not mention %s", s)
		}
	}
}

// TestHelpExampleConfigLoads keeps the config file shown by --help valid.
func TestHelpExampleConfigLoads(t *testing.T) {
	_, example, ok := strings.Cut(usageMore, "Config file (YAML; every key optional):\n")
	if !ok {
		t.Fatal("no config example in the help")
	}
	var lines []string
	for l := range strings.Lines(example) {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	path := filepath.Join(t.TempDir(), "example.yaml")
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
	c := &config{}
	if err := c.loadFile(path, true); err != nil {
		t.Fatal(err)
	}
	if c.model != "deepseek/deepseek-chat" || len(c.providers) != 2 || c.providers[0].Models[0].Price == nil || c.streamIdleTimeout != 2*time.Minute {
		t.Errorf("example parsed as %+v", c)
	}
}
