package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/acp-bridge/acp-bridge/sandbox"
)

// readmeSetting is how the test checks one row of the README's settings
// table: the value it sets, what else that needs, and what must follow.
type readmeSetting struct {
	value string
	// extra settings the row needs to mean anything: flags (and, for the
	// environment, the same flags), and YAML for the config file.
	args  []string
	yaml  string
	check func(cfg *config, def *modelChoiceView, defID string) error
}

const readmeEndpoint = "http://127.0.0.1:9/v1"

// providerYAML is a provider "p" with a model "m", chosen.
const providerYAML = "model: p/m\nproviders:\n  p:\n    base_url: " + readmeEndpoint + "\n    models:\n      - name: m\n"

func readmeSettings(t *testing.T) map[string]readmeSetting {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.yaml")
	os.WriteFile(other, []byte("model: from-file\n"), 0o644)
	eq := func(what string, got, want any) error {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("%s = %v, want %v", what, got, want)
		}
		return nil
	}
	opt := func(def *modelChoiceView) (o struct {
		base, keyEnv, key string
		maxTokens         int
		idle              time.Duration
	}) {
		if def != nil && def.openai != nil {
			x := def.openai.Options()
			o.base, o.keyEnv, o.key, o.maxTokens, o.idle = x.BaseURL, x.APIKeyEnv, x.APIKey, x.MaxTokens, x.IdleTimeout
		}
		return o
	}
	return map[string]readmeSetting{
		"endpoint": {value: readmeEndpoint, args: []string{"--model", "m"}, yaml: providerYAML,
			check: func(_ *config, d *modelChoiceView, _ string) error {
				return eq("base URL", opt(d).base, readmeEndpoint)
			}},
		"model": {value: "m2", check: func(_ *config, _ *modelChoiceView, id string) error {
			if !strings.HasSuffix(id, "/m2") {
				return fmt.Errorf("default model %s, want …/m2", id)
			}
			return nil
		}},
		"key variable": {value: "MY_KEY", yaml: providerYAML, check: func(_ *config, d *modelChoiceView, _ string) error {
			return eq("key variable", opt(d).keyEnv, "MY_KEY")
		}},
		"context window": {value: "32768", yaml: providerYAML, check: func(_ *config, d *modelChoiceView, _ string) error {
			return eq("context window", d.ctxWindow, 32768)
		}},
		"images":     {value: "true", yaml: providerYAML, check: func(_ *config, d *modelChoiceView, _ string) error { return eq("images", d.images, true) }},
		"max tokens": {value: "777", check: func(_ *config, d *modelChoiceView, _ string) error { return eq("max tokens", opt(d).maxTokens, 777) }},
		"permission mode": {value: "plan", check: func(c *config, _ *modelChoiceView, _ string) error {
			return eq("permission mode", c.permissionMode, "plan")
		}},
		"bypass in the mode picker": {value: "true", check: func(c *config, _ *modelChoiceView, _ string) error {
			return eq("offer bypass", c.offerBypass, true)
		}},
		"sandbox mode": {value: "read-only", check: func(c *config, _ *modelChoiceView, _ string) error {
			return eq("sandbox mode", c.sandbox.mode(), sandbox.ReadOnly)
		}},
		"tools mode": {value: "code", check: func(c *config, _ *modelChoiceView, _ string) error { return eq("tools mode", c.toolsMode, "code") }},
		"requests per turn": {value: "7", check: func(c *config, _ *modelChoiceView, _ string) error {
			return eq("max turn requests", c.maxTurn, 7)
		}},
		"retries": {value: "3", check: func(c *config, _ *modelChoiceView, _ string) error { return eq("retries", c.retries, 3) }},
		"stream idle timeout": {value: "45s", check: func(_ *config, d *modelChoiceView, _ string) error {
			return eq("idle timeout", opt(d).idle, 45*time.Second)
		}},
		"log level": {value: "debug", check: func(c *config, _ *modelChoiceView, _ string) error { return eq("log level", c.logLevel, "debug") }},
		"log file": {value: filepath.Join(dir, "x.log"), check: func(c *config, _ *modelChoiceView, _ string) error {
			return eq("log file", c.logFile, filepath.Join(dir, "x.log"))
		}},
		"session logs": {value: filepath.Join(dir, "state"), check: func(c *config, _ *modelChoiceView, _ string) error {
			return eq("state dir", c.stateDir, filepath.Join(dir, "state"))
		}},
		"config file": {value: other, check: func(c *config, _ *modelChoiceView, id string) error {
			if c.configPath != other || !strings.HasSuffix(id, "/from-file") {
				return fmt.Errorf("config %q, model %s; want %s and its model", c.configPath, id, other)
			}
			return nil
		}},
	}
}

// TestReadmeSettingsWork reads the settings table of README.md and tries
// every flag, variable and config key in it as written: each must be
// accepted and have its effect.
func TestReadmeSettingsWork(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "| setting | flag | environment | config file |\n|---|---|---|---|\n")
	if !ok {
		t.Fatal("README.md has no settings table")
	}
	specs := readmeSettings(t)
	code := regexp.MustCompile("`([^`]+)`")
	rows := 0
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(strings.ReplaceAll(strings.TrimSpace(line), `\|`, "¦"), "|"), "|")
		if len(cells) != 4 {
			t.Fatalf("row %q has %d cells", line, len(cells))
		}
		name := strings.TrimSpace(cells[0])
		spec, ok := specs[name]
		if !ok {
			t.Errorf("README setting %q: the test does not know how to check it", name)
			continue
		}
		rows++
		try := func(how string, args []string, env map[string]string, check func(*config, *modelChoiceView, string) error) {
			t.Run(name+"/"+how, func(t *testing.T) {
				clearEnv(t)
				for k, v := range env {
					t.Setenv(k, v)
				}
				cfg, _, err := parseFlags("acp-bridge", args, nil)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				ms, def, err := viewChoices(cfg)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				var d *modelChoiceView
				for i := range ms {
					if ms[i].id == def {
						d = &ms[i]
					}
				}
				if err := check(cfg, d, def); err != nil {
					t.Errorf("%s (args %v, env %v)", err, args, env)
				}
			})
		}
		withFile := func(body string) []string {
			if body == "" {
				return nil
			}
			p := filepath.Join(t.TempDir(), "config.yaml")
			os.WriteFile(p, []byte(body), 0o644)
			return []string{"--config", p}
		}
		// The flag: `--name PLACEHOLDER` or `--name` alone for a switch.
		if m := code.FindStringSubmatch(cells[1]); m != nil {
			flagName, _, hasValue := strings.Cut(m[1], " ")
			args := []string{flagName}
			if hasValue {
				args = append(args, spec.value)
			}
			try("flag", append(append(withFile(spec.yaml), spec.args...), args...), nil, spec.check)
		} else {
			t.Errorf("README setting %q names no flag", name)
		}
		// The variables.
		for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
			env := map[string]string{m[1]: spec.value}
			args, check := append(withFile(spec.yaml), spec.args...), spec.check
			if name == "key variable" {
				// These hold the key itself, for the endpoint they belong to.
				env[m[1]] = "sk-readme"
				args = nil
				if m[1] != "DEEPSEEK_API_KEY" {
					args = []string{"--base-url", readmeEndpoint, "--model", "m"}
				}
				check = func(_ *config, d *modelChoiceView, _ string) error {
					if d == nil || d.openai == nil || d.openai.Options().APIKey != "sk-readme" {
						return fmt.Errorf("%s is not the key used", m[1])
					}
					return nil
				}
			}
			if strings.HasPrefix(name, "config") {
				args = nil
			}
			try("env "+m[1], args, env, check)
		}
		// The config key, as nested YAML.
		if m := code.FindStringSubmatch(cells[3]); m != nil {
			body := configWith(t, spec.yaml, m[1], spec.value)
			try("config "+m[1], withFile(body), nil, spec.check)
		}
	}
	if rows != len(specs) {
		t.Errorf("the README's table has %d known settings, the test checks %d", rows, len(specs))
	}
}

func clearEnv(t *testing.T) {
	for _, k := range []string{"ACP_BRIDGE_CONFIG", "ACP_BRIDGE_MODEL", "OPENAI_BASE_URL", "ACP_BRIDGE_PERMISSION_MODE", "ACP_BRIDGE_TOOLS_MODE",
		"ACP_BRIDGE_MAX_TURN_REQUESTS", "ACP_BRIDGE_OFFER_BYPASS", "ACP_BRIDGE_SANDBOX", "ACP_BRIDGE_LOG_LEVEL", "ACP_BRIDGE_LOG_FILE", "ACP_BRIDGE_STATE_DIR", "DEEPSEEK_API_KEY", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no default file
}

// configWith sets a dotted key (`a.b`, `<name>` for the provider "p",
// `models[]` for the first model) to value in the YAML base.
func configWith(t *testing.T, base, key, value string) string {
	doc := map[string]any{}
	if err := yaml.Unmarshal([]byte(base), &doc); err != nil {
		t.Fatal(err)
	}
	var v any = value
	if n, err := strconv.Atoi(value); err == nil {
		v = n
	} else if value == "true" {
		v = true
	}
	cur := doc
	parts := strings.Split(key, ".")
	for i, p := range parts {
		if p == "<name>" {
			p = "p"
		}
		last := i == len(parts)-1
		if list, ok := strings.CutSuffix(p, "[]"); ok {
			items, _ := cur[list].([]any)
			if len(items) == 0 {
				items = []any{map[string]any{"name": "m"}}
				cur[list] = items
			}
			cur = items[0].(map[string]any)
			continue
		}
		if last {
			cur[p] = v
			break
		}
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
