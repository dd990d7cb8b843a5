//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The user's pipeline through the real binary: permission rules, lasting
// answers, hooks, per-tool timeouts and project trust (issue 29's "done
// when"). Each test runs the built bridge against the mock endpoint, with a
// home of its own holding the user's config file.

// toolCalls is a model step that calls tools: name and JSON arguments.
func toolCalls(calls ...[2]string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, _ map[string]any) {
		var ds []string
		for i, c := range calls {
			args, _ := json.Marshal(c[1])
			ds = append(ds, delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":%q,"arguments":%s}}]}`, i, i+1, c[0], args), ""))
		}
		sseWrite(w, 1<<20, append(ds, delta(`{}`, "tool_calls"))...)
	}
}

// answerText is a model step that answers with text.
func answerText(text string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, _ map[string]any) {
		b, _ := json.Marshal(text)
		sseWrite(w, 1<<20, delta(`{"content":`+string(b)+`}`, "stop"))
	}
}

// policyBridge starts the bridge with home as HOME and XDG_CONFIG_HOME and
// config as its config file (none when ""), against m.
func policyBridge(t *testing.T, m *oaiMock, home, config string, args ...string) *rpcClient {
	t.Helper()
	return policyBridgeEnv(t, m, home, config, nil, args...)
}

// policyBridgeEnv is policyBridge with more environment (a proxy, say).
func policyBridgeEnv(t *testing.T, m *oaiMock, home, config string, env []string, args ...string) *rpcClient {
	t.Helper()
	if config != "" {
		if err := os.MkdirAll(filepath.Join(home, "acp-bridge"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "acp-bridge", "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return startE2E(t, append([]string{"MOCK_KEY=sk-e2e", "HOME=" + home, "XDG_CONFIG_HOME=" + home}, env...),
		mockArgs(srv, append([]string{"--retries", "0"}, args...)...)...)
}

func (c *rpcClient) prompt(sid, text string) string {
	c.t.Helper()
	res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	r, _ := res["stopReason"].(string)
	return r
}

func (c *rpcClient) newSession(cwd string) string {
	c.t.Helper()
	return c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})["sessionId"].(string)
}

// final is the last tool_call_update of a call: its status and text.
func (c *rpcClient) final(id string) (status, text string) {
	for _, u := range c.updates("tool_call_update") {
		if u["toolCallId"] != id || u["status"] == nil {
			continue
		}
		status = u["status"].(string)
		b, _ := json.Marshal(u["content"])
		raw, _ := json.Marshal(u["rawOutput"])
		text = string(b) + string(raw)
	}
	return status, text
}

// toolMessage is what a request sent the model as the result of call id.
func toolMessage(req map[string]any, id string) string {
	for _, raw := range req["messages"].([]any) {
		if msg := raw.(map[string]any); msg["role"] == "tool" && msg["tool_call_id"] == id {
			return fmt.Sprint(msg["content"])
		}
	}
	return ""
}

func TestBinaryDenyRuleRefusesInEveryMode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	config := "permissions:\n  deny: [\"Bash(rm -rf:*)\"]\n  allow: [\"Bash(rm:*)\"]\n"
	for _, mode := range []string{"ask", "accept-edits", "plan", "bypass"} {
		t.Run(mode, func(t *testing.T) {
			work := t.TempDir()
			victim := filepath.Join(work, "victim")
			os.MkdirAll(victim, 0o755)
			m := &oaiMock{t: t}
			m.steps = append(m.steps, toolCalls([2]string{"bash", `{"command":"cd . && rm -rf victim"}`}), answerText("done"))
			c := policyBridge(t, m, t.TempDir(), config, "--permission-mode", mode)
			sid := c.newSession(work)
			c.prompt(sid, "clean up")
			status, text := c.final("call_1")
			if status != "failed" || !strings.Contains(text, "deny rule `Bash(rm -rf:*)`") || !strings.Contains(text, "config.yaml") {
				t.Errorf("card: %s %s, want failed naming the rule and its file", status, text)
			}
			if _, err := os.Stat(victim); err != nil {
				t.Errorf("the command ran: %v", err)
			}
			if len(c.perms) != 0 {
				t.Errorf("a denied command was put to the user: %v", c.perms)
			}
			if got := toolMessage(m.reqs[1], "call_1"); !strings.Contains(got, "Bash(rm -rf:*)") {
				t.Errorf("the model read %q", got)
			}
		})
	}
}

func TestBinaryAlwaysAllowLastsAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	home, work := t.TempDir(), t.TempDir()
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"bash", `{"command":"echo first"}`}), answerText("ok"))
	c := policyBridge(t, m, home, "")
	c.answer = func(map[string]any) string { return "allow-always" }
	sid := c.newSession(work)
	c.prompt(sid, "say it")
	if status, _ := c.final("call_1"); status != "completed" || len(c.perms) != 1 {
		t.Fatalf("first process: card %s after %d prompts", status, len(c.perms))
	}

	// A new bridge process, the same project: `echo first` runs without
	// asking, twice in one command line.
	m2 := &oaiMock{t: t}
	m2.steps = append(m2.steps, toolCalls([2]string{"bash", `{"command":"echo first && echo first again"}`}), answerText("ok"))
	c2 := policyBridge(t, m2, home, "")
	c2.answer = func(p map[string]any) string { t.Errorf("asked again: %v", p); return "reject-once" }
	sid2 := c2.newSession(work)
	c2.prompt(sid2, "say it again")
	if status, text := c2.final("call_1"); status != "completed" {
		t.Errorf("second process: card %s %s", status, text)
	}
	c2.prompt(sid2, "/permissions")
	list := c2.agentText()
	if !strings.Contains(list, "allow `Bash(echo first:*)` (remembered") {
		t.Errorf("/permissions does not list the remembered rule:\n%s", list)
	}
	c2.prompt(sid2, "/permissions remove 1")
	if text := c2.agentText(); !strings.Contains(text, "Removed the allow `Bash(echo first:*)`") {
		t.Errorf("remove: %s", text)
	}

	// Gone: the third process asks again.
	m3 := &oaiMock{t: t}
	m3.steps = append(m3.steps, toolCalls([2]string{"bash", `{"command":"echo first"}`}), answerText("ok"))
	c3 := policyBridge(t, m3, home, "")
	c3.prompt(c3.newSession(work), "once more")
	if len(c3.perms) != 1 {
		t.Errorf("after remove, %d prompts, want 1", len(c3.perms))
	}
}

func TestBinaryPreToolHookDeniesWithReason(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	config := `hooks:
  PreToolUse:
    - matcher: bash
      command: "grep -q curl && { echo 'no network from the agent: use the vendored copy' >&2; exit 2; }; exit 0"
`
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"bash", `{"command":"curl https://example.com"}`}, [2]string{"bash", `{"command":"echo fine"}`}), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), config, "--permission-mode", "bypass")
	c.prompt(c.newSession(t.TempDir()), "fetch")
	got := toolMessage(m.reqs[1], "call_1")
	if !strings.Contains(got, "no network from the agent: use the vendored copy") || !strings.Contains(got, "PreToolUse hook") {
		t.Errorf("the model read %q", got)
	}
	if status, _ := c.final("call_1"); status != "failed" {
		t.Errorf("denied call: %s", status)
	}
	if got := toolMessage(m.reqs[1], "call_2"); !strings.Contains(got, "fine") {
		t.Errorf("the allowed call read %q", got)
	}
}

func TestBinaryPostToolHookBlocksAndAddsContext(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("AKIA-secret\n"), 0o644)
	os.WriteFile(filepath.Join(work, "b.txt"), []byte("plain\n"), 0o644)
	hook := filepath.Join(t.TempDir(), "scan.sh")
	os.WriteFile(hook, []byte(`#!/bin/sh
in=$(cat)
case "$in" in
*AKIA*) echo '{"decision":"block","reason":"a credential is in the output; do not repeat it"}' ;;
*b.txt*) echo '{"hookSpecificOutput":{"additionalContext":"b.txt is generated; edit b.src instead"}}' ;;
esac
`), 0o755)
	config := "hooks:\n  PostToolUse:\n    - matcher: read\n      command: " + hook + "\n"
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"read", `{"file_path":"a.txt"}`}, [2]string{"read", `{"file_path":"b.txt"}`}), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), config)
	c.prompt(c.newSession(work), "read both")
	if status, text := c.final("call_1"); status != "failed" || !strings.Contains(text, "a credential is in the output") {
		t.Errorf("blocked call: %s %s", status, text)
	}
	if got := toolMessage(m.reqs[1], "call_1"); strings.Contains(got, "AKIA") || !strings.Contains(got, "do not repeat it") {
		t.Errorf("the model read %q for the blocked call", got)
	}
	// The context follows both results, in one user message.
	msgs := m.reqs[1]["messages"].([]any)
	var roles []string
	for _, raw := range msgs {
		msg := raw.(map[string]any)
		roles = append(roles, msg["role"].(string))
	}
	last := msgs[len(msgs)-1].(map[string]any)
	if n := len(roles); n < 3 || roles[n-3] != "tool" || roles[n-2] != "tool" || roles[n-1] != "user" ||
		!strings.Contains(fmt.Sprint(last["content"]), "b.txt is generated") {
		t.Errorf("the next request ends %v, last %v", roles, last)
	}
}

func TestBinaryHangingHookIsStoppedAndReported(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// In the workspace: a hook is sandboxed like a command.
	work := t.TempDir()
	pidFile := filepath.Join(work, "pid")
	config := "hooks:\n  PreToolUse:\n    - command: \"echo $$ > " + pidFile + "; sleep 60\"\n      timeout: 500ms\n"
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"bash", `{"command":"echo still ran"}`}), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), config, "--permission-mode", "bypass")
	c.prompt(c.newSession(work), "go")
	if text := c.agentText(); !strings.Contains(text, "did not finish within 500ms and was stopped") {
		t.Errorf("no report of the hook:\n%s", text)
	}
	if status, _ := c.final("call_1"); status != "completed" {
		t.Errorf("the call after a failed hook: %s", status)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(b), &pid)
	if pid > 0 && syscall.Kill(pid, 0) == nil {
		// A zombie waiting for init counts as gone.
		if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(st), ") Z") {
			t.Errorf("the hook's process %d outlived its limit", pid)
		}
	}
}

// TestBinaryTimeoutSaysWhereItWasSet: a command stopped by its time limit
// fails with the limit and where it was set (the config file's timeouts,
// the project's settings file, the call's own timeout_ms), in what the
// model reads and in what the card shows, for a client with Zed's terminal
// and one without; never only "killed by signal: SIGTERM".
func TestBinaryTimeoutSaysWhereItWasSet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tests := []struct {
		name, config, project, args string
		where                       func(home, work string) string
	}{
		{"the config file", "timeouts:\n  bash: 1s\n", "", `{"command":"sleep 30"}`,
			func(home, _ string) string {
				return "timeouts.bash in " + filepath.Join(home, "acp-bridge", "config.yaml")
			}},
		{"the project settings over the config file", "timeouts:\n  bash: 5m\n", "timeouts:\n  bash: 1s\n", `{"command":"sleep 30"}`,
			func(_, work string) string {
				return "timeouts.bash in " + filepath.Join(work, ".acp-bridge", "settings.yaml")
			}},
		{"the call's timeout_ms", "", "", `{"command":"sleep 30","timeout_ms":1000}`,
			func(_, _ string) string { return "the timeout_ms argument of this call" }},
	}
	for _, tt := range tests {
		for _, terminal := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/terminal=%v", tt.name, terminal), func(t *testing.T) {
				home, work := t.TempDir(), t.TempDir()
				if tt.project != "" {
					os.MkdirAll(filepath.Join(work, ".acp-bridge"), 0o755)
					os.WriteFile(filepath.Join(work, ".acp-bridge", "settings.yaml"), []byte(tt.project), 0o644)
				}
				m := &oaiMock{t: t}
				m.steps = append(m.steps, toolCalls([2]string{"bash", tt.args}), answerText("ok"))
				if tt.config != "" {
					os.MkdirAll(filepath.Join(home, "acp-bridge"), 0o755)
					os.WriteFile(filepath.Join(home, "acp-bridge", "config.yaml"), []byte(tt.config), 0o644)
				}
				srv := httptest.NewServer(m)
				t.Cleanup(srv.Close)
				stdin, sc := startBinary(t, []string{"MOCK_KEY=sk-e2e", "HOME=" + home, "XDG_CONFIG_HOME=" + home},
					mockArgs(srv, "--retries", "0", "--permission-mode", "bypass")...)
				c := &rpcClient{t: t, in: stdin, out: sc}
				caps := map[string]any{}
				if terminal {
					caps["_meta"] = map[string]any{"terminal_output": true}
				}
				c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
				start := time.Now()
				c.prompt(c.newSession(work), "wait")
				took := time.Since(start)
				t.Logf("the turn took %s", took)
				if took > never {
					t.Errorf("the turn took %s: the limit did not stop the command", took)
				}
				want := "stopped after 1s: " + tt.where(home, work)
				if len(m.reqs) < 2 {
					t.Fatalf("the model was asked %d times", len(m.reqs))
				}
				if got := toolMessage(m.reqs[1], "call_1"); !strings.Contains(got, want) {
					t.Errorf("the model read %q; want %q in it", got, want)
				}
				// What the card shows: its content and terminal data, not
				// the rawOutput (the model's text).
				var shown strings.Builder
				status := ""
				for _, u := range c.updates("tool_call_update") {
					if u["toolCallId"] != "call_1" {
						continue
					}
					if st, ok := u["status"].(string); ok {
						status = st
					}
					b, _ := json.Marshal(map[string]any{"content": u["content"], "_meta": u["_meta"]})
					shown.Write(b)
				}
				t.Logf("the model read %q; the card showed %s", toolMessage(m.reqs[1], "call_1"), shown.String())
				if status != "failed" {
					t.Errorf("the card ended %q, want failed", status)
				}
				if !strings.Contains(shown.String(), want) {
					t.Errorf("the card shows %s; want %q in it", shown.String(), want)
				}
			})
		}
	}
}

func TestBinaryProjectSettingsNeedTrust(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	home, work := t.TempDir(), t.TempDir()
	marker := filepath.Join(work, "hook-ran")
	os.MkdirAll(filepath.Join(work, ".acp-bridge"), 0o755)
	project := "permissions:\n  allow: [\"Bash(echo:*)\"]\n  deny: [\"Bash(rm -rf:*)\"]\nhooks:\n  PreToolUse:\n    - command: touch " + marker + "\n"
	os.WriteFile(filepath.Join(work, ".acp-bridge", "settings.yaml"), []byte(project), 0o644)

	run := func(trust string) *rpcClient {
		m := &oaiMock{t: t}
		m.steps = append(m.steps, toolCalls([2]string{"bash", `{"command":"echo hi"}`}, [2]string{"bash", `{"command":"rm -rf x"}`}), answerText("ok"))
		c := policyBridge(t, m, home, "")
		c.answer = func(p map[string]any) string {
			if strings.HasPrefix(p["toolCall"].(map[string]any)["toolCallId"].(string), "trust-") {
				return trust
			}
			return "allow-once"
		}
		c.prompt(c.newSession(work), "go")
		return c
	}

	// Declined: the project's deny rule applies, its allow rule and hook do not.
	c := run("do-not-trust")
	if len(c.perms) != 2 {
		t.Fatalf("%d permission requests, want the trust prompt and echo's own", len(c.perms))
	}
	listing, _ := json.Marshal(c.perms[0])
	for _, w := range []string{"Bash(echo:*)", "PreToolUse", "touch"} {
		if !strings.Contains(string(listing), w) {
			t.Errorf("the trust prompt does not list %q: %s", w, listing)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("an untrusted project's hook ran")
	}
	if status, text := c.final("call_2"); status != "failed" || !strings.Contains(text, "Bash(rm -rf:*)") {
		t.Errorf("untrusted project's deny rule: %s %s", status, text)
	}

	// Accepted: both take effect (no prompt for echo, the hook runs).
	c = run("trust")
	if len(c.perms) != 1 {
		t.Errorf("%d permission requests after trusting, want only the trust prompt", len(c.perms))
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the trusted hook did not run: %v", err)
	}

	// Trusted stays trusted in the next process ...
	os.Remove(marker)
	c = run("do-not-trust")
	if len(c.perms) != 0 {
		t.Errorf("asked again for unchanged settings: %v", c.perms)
	}
	// ... until the file changes.
	os.WriteFile(filepath.Join(work, ".acp-bridge", "settings.yaml"), []byte(strings.Replace(project, "echo:*", "echo hi:*", 1)), 0o644)
	os.Remove(marker)
	c = run("do-not-trust")
	if len(c.perms) != 2 {
		t.Errorf("changed settings: %d requests, want the trust prompt and echo's own", len(c.perms))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a changed, untrusted hook ran")
	}
}

// Code Mode sub-calls pass the same rules and hooks as direct calls.
func TestBinaryCodeModeSubCallsPassTheRulesAndHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	victim := filepath.Join(work, "victim")
	os.MkdirAll(victim, 0o755)
	seen := filepath.Join(work, "seen") // in the workspace: the hook is sandboxed
	config := "permissions:\n  deny: [\"Bash(rm -rf:*)\"]\nhooks:\n  PreToolUse:\n    - matcher: bash\n      command: cat >> " + seen + "\n" +
		"  PostToolUse:\n    - matcher: bash\n      command: \"echo '{\\\"additionalContext\\\":\\\"the sub-call was checked\\\"}'\"\n"
	program := `let refused = "";
try { await tools.bash({command: "rm -rf victim"}) } catch (e) { refused = e.message }
const ok = await tools.bash({command: "echo from the program"});
return {refused, ok};`
	args, _ := json.Marshal(map[string]string{"code": program, "description": "Clean up"})
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"run_code", string(args)}), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), config, "--tools-mode", "code", "--permission-mode", "bypass")
	c.prompt(c.newSession(work), "clean up")
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the sub-call ran: %v", err)
	}
	if got := toolMessage(m.reqs[1], "call_1"); !strings.Contains(got, "deny rule `Bash(rm -rf:*)`") || !strings.Contains(got, "from the program") {
		t.Errorf("the program's result: %q", got)
	}
	// The sub-call's hook context follows the program's result.
	msgs := m.reqs[1]["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["role"] != "user" || !strings.Contains(fmt.Sprint(last["content"]), "the sub-call was checked") {
		t.Errorf("the request after the program ends with %v", last)
	}
	b, _ := os.ReadFile(seen)
	if !strings.Contains(string(b), `"command":"echo from the program"`) || !strings.Contains(string(b), `"hook_event_name":"PreToolUse"`) {
		t.Errorf("the PreToolUse hook saw %q", b)
	}
}

// doctor names a bad rule, a hook whose program is missing and a broken
// project file, each with what to do.
func TestBinaryDoctorValidatesRulesAndHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	doctor := func(config, project string) string {
		home, work := t.TempDir(), t.TempDir()
		os.MkdirAll(filepath.Join(home, "acp-bridge"), 0o755)
		os.WriteFile(filepath.Join(home, "acp-bridge", "config.yaml"), []byte(config), 0o644)
		if project != "" {
			os.MkdirAll(filepath.Join(work, ".acp-bridge"), 0o755)
			os.WriteFile(filepath.Join(work, ".acp-bridge", "settings.yaml"), []byte(project), 0o644)
		}
		cmd := exec.Command(bridgeBinary(t), "doctor", "--base-url", "http://127.0.0.1:1/v1", "--model", "m1")
		cmd.Dir = work
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home}, sandboxEnv()...)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	for _, tc := range []struct {
		name, config, project string
		want                  []string
	}{
		{"bad rule", "permissions:\n  deny: [\"Bash()\"]\n", "",
			[]string{"FAIL config", "permissions.deny[0]", "empty pattern"}},
		{"bad hook", "hooks:\n  PreToolUse:\n    - matcher: \"(\"\n      command: x\n", "",
			[]string{"FAIL config", "hooks.PreToolUse[0]", "not a regular expression"}},
		{"missing program", "hooks:\n  PostToolUse:\n    - command: no-such-formatter --write\n", "",
			[]string{"FAIL rules", "no-such-formatter, which is not on PATH", "Fix: install the program"}},
		{"good", "permissions:\n  deny: [\"Read(./.env)\"]\nhooks:\n  Stop:\n    - command: echo done\n", "permissions:\n  allow: [\"Bash(go test:*)\"]\n",
			[]string{"ok   rules    config file: 1 rule, 1 hook", "ok   project", "1 rule, 0 hooks; its allow rules and hooks wait for your trust"}},
		{"broken project", "", "permissions:\n  alow: [x]\n",
			[]string{"FAIL project", "alow", "not even its deny rules"}},
		{"bad project rule", "", "permissions:\n  deny: [\"Bash(:*)\"]\n",
			[]string{"FAIL project", "permissions.deny[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := doctor(tc.config, tc.project)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("doctor output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// The README's recipes, as written, through the binary: the user config
// formats an edited Go file and keeps .env unreadable; the project file
// (trusted) refuses rm -rf.
func TestBinaryReadmeRecipesWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, prog := range []string{"jq", "gofmt"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("the formatting recipe needs %s: %v", prog, err)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### Permission rules, hooks and tool limits\n")
	if !ok {
		t.Fatal("README.md has no section on rules and hooks")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "```yaml\n")
		if !ok {
			break
		}
		block, tail, _ := strings.Cut(after, "```\n")
		blocks, rest = append(blocks, block), tail
	}
	if len(blocks) != 2 {
		t.Fatalf("the section has %d yaml blocks, want the user's and the project's", len(blocks))
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, ".env"), []byte("API_KEY=hunter2\n"), 0o600)
	os.MkdirAll(filepath.Join(work, "build"), 0o755)
	os.MkdirAll(filepath.Join(work, ".acp-bridge"), 0o755)
	os.WriteFile(filepath.Join(work, ".acp-bridge", "settings.yaml"), []byte(blocks[1]), 0o644)

	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls(
		[2]string{"write", `{"file_path":"main.go","content":"package main\nfunc main(){println( 1 )}\n"}`},
		[2]string{"read", `{"file_path":".env"}`},
		[2]string{"bash", `{"command":"cat .env"}`},
		[2]string{"bash", `{"command":"rm -rf build"}`},
		[2]string{"bash", `{"command":"go test ./..."}`},
	), answerText("ok"))
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".cache", "go-build"), 0o755) // the recipe's sandbox.writable
	c := policyBridge(t, m, home, blocks[0], "--permission-mode", "accept-edits")
	c.answer = func(p map[string]any) string {
		if id := p["toolCall"].(map[string]any)["toolCallId"].(string); strings.HasPrefix(id, "trust-") {
			return "trust"
		}
		t.Errorf("asked about %v", p["toolCall"])
		return "reject-once"
	}
	c.prompt(c.newSession(work), "go")
	if b, _ := os.ReadFile(filepath.Join(work, "main.go")); string(b) != "package main\n\nfunc main() { println(1) }\n" {
		t.Errorf("main.go after the formatting hook:\n%s", b)
	}
	for id, rule := range map[string]string{"call_2": "Read(.env)", "call_3": "Bash(*.env*)", "call_4": "Bash(rm -rf:*)"} {
		got := toolMessage(m.reqs[1], id)
		if !strings.Contains(got, rule) || strings.Contains(got, "hunter2") {
			t.Errorf("%s: the model read %q, want a refusal naming %s", id, got, rule)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "build")); err != nil {
		t.Errorf("rm -rf ran: %v", err)
	}
	if status, _ := c.final("call_5"); status != "completed" && status != "failed" {
		t.Errorf("go test (allowed by the trusted project) did not run: %s", status)
	}
	if len(c.perms) != 1 {
		t.Errorf("%d permission requests, want the trust prompt only", len(c.perms))
	}
}

// An ask rule asks in bypass too, names itself, and offers no "always".
func TestBinaryAskRuleAsksInBypass(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"bash", `{"command":"git push origin main"}`}), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), "permissions:\n  ask: [\"Bash(git push:*)\"]\n  allow: [\"Bash(git:*)\"]\n", "--permission-mode", "bypass")
	c.answer = func(map[string]any) string { return "reject-once" }
	c.prompt(c.newSession(t.TempDir()), "push")
	if len(c.perms) != 1 {
		t.Fatalf("%d permission requests, want 1", len(c.perms))
	}
	var ids []string
	for _, o := range c.perms[0]["options"].([]any) {
		ids = append(ids, o.(map[string]any)["optionId"].(string))
	}
	if strings.Join(ids, " ") != "allow-once reject-once" {
		t.Errorf("options %v, want allow once and reject only", ids)
	}
	if text := c.agentText(); !strings.Contains(text, "ask rule `Bash(git push:*)`") {
		t.Errorf("the thread does not name the rule:\n%s", text)
	}
	if got := toolMessage(m.reqs[1], "call_1"); !strings.Contains(got, "rejected") {
		t.Errorf("the model read %q", got)
	}
}

// UserPromptSubmit hooks add context to a prompt or keep it from the
// model; Stop hooks are told how the turn ended.
func TestBinaryPromptAndStopHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	stops := filepath.Join(work, "stops") // in the workspace: hooks are sandboxed
	config := `hooks:
  UserPromptSubmit:
    - command: 'if grep -q password; then echo "prompts must not carry passwords" >&2; exit 2; fi; echo "branch: main"'
  Stop:
    - command: 'jq -r .stop_reason >> ` + stops + `'
`
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the Stop hook uses jq")
	}
	m := &oaiMock{t: t}
	m.steps = append(m.steps, answerText("hello"))
	c := policyBridge(t, m, t.TempDir(), config)
	sid := c.newSession(work)
	c.prompt(sid, "hi")
	if len(m.reqs) != 1 {
		t.Fatalf("%d requests", len(m.reqs))
	}
	msgs := m.reqs[0]["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["role"] != "user" || last["content"] != "branch: main" {
		t.Errorf("the request ends with %v, want the hook's context after the prompt", last)
	}
	c.prompt(sid, "my password is hunter2")
	if len(m.reqs) != 1 {
		t.Errorf("a blocked prompt reached the model")
	}
	if text := c.agentText(); !strings.Contains(text, "prompts must not carry passwords") {
		t.Errorf("the thread does not say why:\n%s", text)
	}
	if b, _ := os.ReadFile(stops); string(b) != "end_turn\nend_turn\n" {
		t.Errorf("Stop hooks saw %q", b)
	}
}
