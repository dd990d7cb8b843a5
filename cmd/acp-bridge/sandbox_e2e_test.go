//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// The sandbox through the real binary (issue 39's "done when"): what a
// confined command may write and reach, the same for a background job, a
// hook and a stdio MCP server, the run outside the sandbox offered after
// a refusal, rules that match what runs, and a kernel without Landlock.

func needSandbox(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if s := sandbox.Probe(); !s.Available {
		t.Skipf("no sandbox on this machine: %s", s.Reason)
	}
}

func absent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was created (%v)", path, err)
	}
}

// waitFile waits for a file a process writes when it is done; the bound
// tells never from late.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

func TestBinarySandboxConfinesWrites(t *testing.T) {
	needSandbox(t)
	work, outside := t.TempDir(), t.TempDir()
	out := filepath.Join(outside, "escaped")
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls(
		[2]string{"bash", fmt.Sprintf(`{"command":"echo x > %s"}`, out)},
		[2]string{"bash", `{"command":"echo x > inside && echo y > \"$TMPDIR/scratch\" && cat inside"}`},
	), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), "", "--permission-mode", "bypass")
	c.prompt(c.newSession(work), "write")
	absent(t, out)
	got := toolMessage(m.reqs[1], "call_1")
	if !strings.Contains(got, "Permission denied") || !strings.Contains(got, "refused by the sandbox (sandbox workspace-write") {
		t.Errorf("the model read %q, want the sandbox's reason", got)
	}
	if status, _ := c.final("call_1"); status != "failed" {
		t.Errorf("the refused call is %s", status)
	}
	if got := toolMessage(m.reqs[1], "call_2"); !strings.Contains(got, "[exit code: 0]") {
		t.Errorf("inside the workspace: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "inside")); string(b) != "x\n" {
		t.Errorf("inside: %q", b)
	}
	if len(c.perms) != 0 {
		t.Errorf("bypass asked %d times: the refusal stands without sandbox.escalate", len(c.perms))
	}
}

func TestBinarySandboxNetwork(t *testing.T) {
	needSandbox(t)
	srv := httptest.NewServer(http.NotFoundHandler()) // a loopback port that takes connections
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	connect := fmt.Sprintf(`{"command":"exec 3<>/dev/tcp/127.0.0.1/%s && echo connected"}`, port)
	for _, tc := range []struct {
		config string
		want   string
	}{
		{"", "Permission denied"},
		{"sandbox:\n  network: true\n", "connected"},
	} {
		m := &oaiMock{t: t}
		m.steps = append(m.steps, toolCalls([2]string{"bash", connect}), answerText("ok"))
		c := policyBridge(t, m, t.TempDir(), tc.config, "--permission-mode", "bypass")
		c.prompt(c.newSession(t.TempDir()), "connect")
		if got := toolMessage(m.reqs[1], "call_1"); !strings.Contains(got, tc.want) {
			t.Errorf("config %q: the model read %q, want %q", tc.config, got, tc.want)
		}
	}
}

// A background job, a hook and a stdio MCP server are confined as the
// bash tool's commands are.
func TestBinarySandboxConfinesJobsHooksAndMCPServers(t *testing.T) {
	needSandbox(t)
	work, outside := t.TempDir(), t.TempDir()
	job := fmt.Sprintf("echo x > %s/job; echo done > %s/job-done", outside, work)
	hook := fmt.Sprintf("echo x > %s/hook; echo ran > %s/hook-ran", outside, work)
	m := &oaiMock{t: t}
	args := fmt.Sprintf(`{"command":%q,"run_in_background":true}`, job)
	m.steps = append(m.steps, toolCalls([2]string{"bash", args}), answerText("ok"))
	config := "hooks:\n  PreToolUse:\n    - matcher: bash\n      command: " + strconv.Quote(hook) + "\n"
	c := policyBridge(t, m, t.TempDir(), config, "--permission-mode", "bypass")
	pidFile := filepath.Join(outside, "mcp-pids")
	env := []any{}
	for _, kv := range mcptest.Env(mcptest.ModeStdio, pidFile) {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, map[string]any{"name": k, "value": v})
	}
	sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{
		map[string]any{"name": "tools", "command": os.Args[0], "args": []any{}, "env": env}}})["sessionId"].(string)
	c.prompt(sid, "start it")
	waitFile(t, filepath.Join(work, "hook-ran"))
	waitFile(t, filepath.Join(work, "job-done"))
	absent(t, filepath.Join(outside, "hook"))
	absent(t, filepath.Join(outside, "job"))
	if len(c.updates("tool_call")) == 0 {
		t.Fatal("no tool call")
	}
	// The MCP server started (its tools are listed) but could not write
	// its pid outside the workspace.
	absent(t, pidFile)
	if tools, _ := json.Marshal(m.reqs[0]["tools"]); !strings.Contains(string(tools), "mcp__tools__") {
		t.Errorf("the MCP server's tools are not offered: %s", tools)
	}
}

// A write the sandbox refused is put to the user: "keep it refused"
// keeps it refused, "run once outside" runs it once, unconfined.
func TestBinarySandboxEscalation(t *testing.T) {
	needSandbox(t)
	work, outside := t.TempDir(), t.TempDir()
	out := filepath.Join(outside, "escaped")
	call := fmt.Sprintf(`{"command":"echo x >> %s"}`, out)
	for _, tc := range []struct {
		answer string
		lines  int // in the file afterwards (it is one file for all cases)
		config string
		args   []string
	}{
		{"keep-refused", 0, "", nil},
		{"outside-once", 1, "", nil},
		// bypass asks nobody, unless the user's config allows escalation
		{"outside-once", 2, "sandbox:\n  escalate: true\n", []string{"--permission-mode", "bypass"}},
	} {
		m := &oaiMock{t: t}
		m.steps = append(m.steps, toolCalls([2]string{"bash", call}), answerText("ok"))
		c := policyBridge(t, m, t.TempDir(), tc.config, tc.args...)
		var offered []string
		c.answer = func(p map[string]any) string {
			var ids []string
			for _, o := range p["options"].([]any) {
				ids = append(ids, o.(map[string]any)["optionId"].(string))
			}
			if ids[0] != "outside-once" {
				return "allow-once" // bash's own prompt, in ask mode
			}
			offered = ids
			return tc.answer
		}
		c.prompt(c.newSession(work), "write")
		if strings.Join(offered, " ") != "outside-once outside-always keep-refused" {
			t.Fatalf("%s: escalation options %v", tc.answer, offered)
		}
		if text := c.agentText(); !strings.Contains(text, "The sandbox refused a command") || !strings.Contains(text, out+": Permission denied") {
			t.Errorf("%s: the thread does not say what was refused:\n%s", tc.answer, text)
		}
		b, _ := os.ReadFile(out)
		if n := strings.Count(string(b), "x\n"); n != tc.lines {
			t.Errorf("%s: the file has %d lines, want %d", tc.answer, n, tc.lines)
		}
		status, _ := c.final("call_1")
		if want := map[bool]string{true: "failed", false: "completed"}[tc.answer == "keep-refused"]; status != want {
			t.Errorf("%s: the call is %s, want %s", tc.answer, status, want)
		}
	}
}

// Bash(rm -rf:*) refuses the spellings of the same command, and a
// computed program name is asked about.
func TestBinaryDenyRuleMatchesWhatRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	spellings := []string{"rm -fr victim", "rm -r -f victim", "/bin/rm -rf victim", "r''m -rf victim", `\rm -rf victim`}
	var calls [][2]string
	for _, s := range spellings {
		args, _ := json.Marshal(map[string]string{"command": s})
		calls = append(calls, [2]string{"bash", string(args)})
	}
	calls = append(calls, [2]string{"bash", `{"command":"$(printf rm) -rf victim"}`})
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls(calls...), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), "permissions:\n  deny: [\"Bash(rm -rf:*)\"]\n", "--permission-mode", "bypass")
	c.answer = func(map[string]any) string { return "reject-once" }
	os.MkdirAll(filepath.Join(work, "victim"), 0o755)
	c.prompt(c.newSession(work), "clean")
	if _, err := os.Stat(filepath.Join(work, "victim")); err != nil {
		t.Fatalf("victim went: %v", err)
	}
	for i, s := range spellings {
		if got := toolMessage(m.reqs[1], fmt.Sprintf("call_%d", i+1)); !strings.Contains(got, "deny rule `Bash(rm -rf:*)`") {
			t.Errorf("%s: the model read %q", s, got)
		}
	}
	if len(c.perms) != 1 {
		t.Fatalf("%d permission requests, want 1 (the computed name)", len(c.perms))
	}
	if got := toolMessage(m.reqs[1], fmt.Sprintf("call_%d", len(calls))); !strings.Contains(got, "rejected") {
		t.Errorf("the computed name: the model read %q", got)
	}
	if text := c.agentText(); !strings.Contains(text, "program is computed (`$(printf rm)`)") {
		t.Errorf("the thread does not say why it asked:\n%s", text)
	}
}

// On a kernel without Landlock (simulated) the bridge says so at start,
// in the picker, in the thread and in doctor, and runs no command
// unconfined unless the user chose mode off.
func TestBinaryNoLandlockNeverPretends(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, mode := range []string{"workspace-write", "off"} {
		work := t.TempDir()
		m := &oaiMock{t: t}
		m.steps = append(m.steps, toolCalls([2]string{"bash", `{"command":"echo ran > ran"}`}), answerText("ok"))
		srv := httptest.NewServer(m)
		t.Cleanup(srv.Close)
		stdin, sc, stderr := startBinaryStderr(t, []string{"MOCK_KEY=sk-e2e", probeEnv + "=none"},
			mockArgs(srv, "--retries", "0", "--permission-mode", "bypass", "--sandbox", mode)...)
		c := &rpcClient{t: t, in: stdin, out: sc}
		c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
		sess := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
		c.prompt(sess["sessionId"].(string), "run")
		_, err := os.Stat(filepath.Join(work, "ran"))
		got := toolMessage(m.reqs[1], "call_1")
		if mode == "off" {
			if err != nil || !strings.Contains(stderr(), "sandbox off") || !strings.Contains(c.agentText(), "Commands are not sandboxed") {
				t.Errorf("off: ran %v; stderr %q; thread %q", err, stderr(), c.agentText())
			}
			continue
		}
		if err == nil || !strings.Contains(got, "SANDBOX_UNAVAILABLE") && !strings.Contains(got, "was not run") {
			t.Errorf("the command ran without its sandbox (%v), or the model read %q", err, got)
		}
		if !strings.Contains(stderr(), "sandbox workspace-write is not available here") {
			t.Errorf("no word at start:\n%s", stderr())
		}
		if !strings.Contains(c.agentText(), "The sandbox is not available") {
			t.Errorf("no word in the thread:\n%s", c.agentText())
		}
		b, _ := json.Marshal(sess["configOptions"])
		if !strings.Contains(string(b), "not available here") {
			t.Errorf("the picker does not say it: %s", b)
		}
	}
	cmd := exec.Command(bridgeBinary(t), "doctor", "--model", "script:/dev/null")
	home := t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home, probeEnv + "=none"}
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "FAIL sandbox  workspace-write is not available") {
		t.Errorf("doctor:\n%s", out)
	}
}

// doctor proves the sandbox on this machine.
func TestBinaryDoctorProvesTheSandbox(t *testing.T) {
	needSandbox(t)
	cmd := exec.Command(bridgeBinary(t), "doctor", "--model", "script:/dev/null")
	home := t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home}
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "ok   sandbox  workspace-write (Landlock ABI") || !strings.Contains(string(out), "refused") {
		t.Errorf("doctor:\n%s", out)
	}
}

// A project's settings only tighten: read-only there refuses a write in
// the workspace the user's workspace-write allows. The editor's Sandbox
// option turns it off for the session, which the thread says once.
func TestBinarySandboxProjectAndPicker(t *testing.T) {
	needSandbox(t)
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, ".acp-bridge"), 0o755)
	os.WriteFile(filepath.Join(work, ".acp-bridge", "settings.yaml"), []byte("sandbox:\n  mode: read-only\n"), 0o644)
	m := &oaiMock{t: t}
	write := [2]string{"bash", `{"command":"echo x >> written"}`}
	m.steps = append(m.steps, toolCalls(write), answerText("ok"), toolCalls(write), answerText("ok"), toolCalls(write), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), "", "--permission-mode", "bypass")
	sid := c.newSession(work)
	c.prompt(sid, "write")
	if got := toolMessage(m.reqs[1], "call_1"); !strings.Contains(got, "sandbox read-only") {
		t.Errorf("the project's read-only did not hold: %q", got)
	}
	absent(t, filepath.Join(work, "written"))
	// The user's off for the session is tightened by the project's
	// read-only while the project asks for it, and holds once it does not.
	res := c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "sandbox", "value": "off"})
	if b, _ := json.Marshal(res); !strings.Contains(string(b), `"currentValue":"off","description":"How the kernel confines`) {
		t.Errorf("set_config_option answered %s", b)
	}
	c.prompt(sid, "write again")
	if got := toolMessage(m.reqs[3], "call_1"); !strings.Contains(got, "sandbox read-only") {
		t.Errorf("off loosened the project's read-only: %q", got)
	}
	absent(t, filepath.Join(work, "written"))
	os.WriteFile(filepath.Join(work, ".acp-bridge", "settings.yaml"), []byte("permissions:\n  deny: [\"Read(.env)\"]\n"), 0o644)
	c.prompt(sid, "and again")
	if b, _ := os.ReadFile(filepath.Join(work, "written")); string(b) != "x\n" {
		t.Errorf("with the sandbox off: %q", b)
	}
	if n := strings.Count(c.agentText(), "The sandbox is off"); n != 1 {
		t.Errorf("told %d times that the sandbox is off, want once:\n%s", n, c.agentText())
	}
	if _, e := c.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "sandbox", "value": "loose"}); e == nil || e.Code != -32602 {
		t.Errorf("an unknown mode: %+v", e)
	}
}

// "Always run … outside the sandbox" is kept as an "always allow" is: a
// rule for the project (`Bash(touch:*)` for touch), which another session
// and another bridge process on the project keep, which /permissions
// lists and `remove` forgets (a refusal is asked about again); a command
// line no rule can describe is remembered for the session only.
func TestBinarySandboxEscalationAlways(t *testing.T) {
	needSandbox(t)
	home, work, outside := t.TempDir(), t.TempDir(), t.TempDir()
	const config = "sandbox:\n  escalate: true\n"
	touch := func(name string) [2]string {
		return [2]string{"bash", fmt.Sprintf(`{"command":"touch %s"}`, filepath.Join(outside, name))}
	}
	start := func(steps ...func(http.ResponseWriter, map[string]any)) (*rpcClient, *[]string) {
		m := &oaiMock{t: t, steps: steps}
		c := policyBridge(t, m, home, config, "--permission-mode", "bypass")
		var asked []string
		c.answer = func(p map[string]any) string {
			asked = append(asked, fmt.Sprint(p["toolCall"].(map[string]any)["title"]))
			if len(asked) == 1 {
				return "outside-always"
			}
			return "keep-refused"
		}
		return c, &asked
	}
	c, asked := start(toolCalls(touch("one")), answerText("ok"), toolCalls(touch("two")), answerText("ok"),
		toolCalls([2]string{"bash", fmt.Sprintf(`{"command":"echo x >> %s"}`, filepath.Join(outside, "log"))}), answerText("ok"),
		toolCalls([2]string{"bash", fmt.Sprintf(`{"command":"echo x >> %s"}`, filepath.Join(outside, "log"))}), answerText("ok"))
	c.prompt(c.newSession(work), "touch one")
	c.prompt(c.newSession(work), "touch two, in another session")
	for _, f := range []string{"one", "two"} {
		if _, err := os.Stat(filepath.Join(outside, f)); err != nil {
			t.Errorf("%s was not made outside the sandbox: %v", f, err)
		}
	}
	if len(*asked) != 1 {
		t.Errorf("asked %d times (%q), want once", len(*asked), *asked)
	}
	// A redirection: remembered exactly, for the session.
	*asked = nil
	sid := c.newSession(work)
	c.prompt(sid, "log")
	c.prompt(sid, "log again")
	if b, _ := os.ReadFile(filepath.Join(outside, "log")); string(b) != "x\nx\n" || len(*asked) != 1 {
		t.Errorf("the session's answer: the file %q, asked %d times", b, len(*asked))
	}

	// Another bridge process on the project: the rule holds, the
	// session's answer does not.
	c2, asked2 := start(toolCalls(touch("three")), answerText("ok"),
		toolCalls([2]string{"bash", fmt.Sprintf(`{"command":"echo x >> %s"}`, filepath.Join(outside, "log"))}), answerText("ok"),
		toolCalls(touch("four")), answerText("ok"))
	*asked2 = []string{"the first answer is spent"}
	sid2 := c2.newSession(work)
	c2.prompt(sid2, "touch three")
	if _, err := os.Stat(filepath.Join(outside, "three")); err != nil || len(*asked2) != 1 {
		t.Errorf("a new process: three %v, asked %q", err, (*asked2)[1:])
	}
	c2.prompt(sid2, "log in a new process")
	if b, _ := os.ReadFile(filepath.Join(outside, "log")); string(b) != "x\nx\n" || len(*asked2) != 2 {
		t.Errorf("the other process's session answer held: the file %q, asked %q", b, (*asked2)[1:])
	}
	c2.prompt(sid2, "/permissions")
	listed := regexp.MustCompile("(?m)^([0-9]+)\\. `Bash\\(touch:\\*\\)`").FindStringSubmatch(c2.agentText())
	if listed == nil || !strings.Contains(c2.agentText(), "Commands that run outside the sandbox") {
		t.Fatalf("/permissions does not list the rule:\n%s", c2.agentText())
	}
	c2.prompt(sid2, "/permissions remove "+listed[1])
	if said := c2.agentText(); !strings.Contains(said, "Removed `Bash(touch:*)` from the commands that run outside the sandbox") {
		t.Errorf("/permissions remove said %q", said)
	}
	c2.prompt(sid2, "touch four")
	absent(t, filepath.Join(outside, "four"))
	if len(*asked2) != 3 {
		t.Errorf("after remove, asked %q, want the refusal asked about again", (*asked2)[1:])
	}
}

// A background job the sandbox refused cannot be asked about when it
// ends (its call was answered when it started): its end says what was
// refused and what to do. Run in the foreground, the same command is
// offered the run outside the sandbox; after "always" it runs outside in
// the background too.
func TestBinarySandboxBackgroundRefusal(t *testing.T) {
	needSandbox(t)
	work, outside, state := t.TempDir(), t.TempDir(), t.TempDir()
	out := filepath.Join(outside, "escaped")
	line := "echo x >> " + out
	bg := [2]string{"bash", fmt.Sprintf(`{"command":%q,"run_in_background":true}`, line)}
	fg := [2]string{"bash", fmt.Sprintf(`{"command":%q}`, line)}
	// afterJobEnds answers once the session's log holds n job ends: the
	// job has ended, and job_output reads how.
	afterJobEnds := func(n int, job string) func(http.ResponseWriter, map[string]any) {
		return func(w http.ResponseWriter, body map[string]any) {
			for deadline := time.Now().Add(30 * time.Second); jobEnds(state) < n; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("%s never ended", job)
					break
				}
			}
			toolCalls([2]string{"job_output", fmt.Sprintf(`{"job":%q}`, job)})(w, body)
		}
	}
	m := &oaiMock{t: t}
	m.steps = append(m.steps,
		toolCalls(bg), afterJobEnds(1, "job-1"), answerText("refused"),
		toolCalls(fg), answerText("ran outside"),
		toolCalls(bg), afterJobEnds(2, "job-2"), answerText("ran outside again"))
	c := policyBridge(t, m, t.TempDir(), "sandbox:\n  escalate: true\n", "--permission-mode", "bypass", "--state-dir", state)
	asked := 0
	c.answer = func(p map[string]any) string {
		asked++
		return "outside-always"
	}
	sid := c.newSession(work)
	c.prompt(sid, "in the background")
	got := lastToolMessage(m.reqs[2])
	for _, want := range []string{"job-1 ended: exit code 1", "refused by the sandbox (sandbox workspace-write", out + ": Permission denied",
		"run the command again without run_in_background"} {
		if !strings.Contains(got, want) {
			t.Errorf("job_output of the refused job does not say %q: %q", want, got)
		}
	}
	absent(t, out)
	if asked != 0 {
		t.Errorf("asked %d times about a job that had ended", asked)
	}
	c.prompt(sid, "in the foreground")
	if asked != 1 {
		t.Errorf("the foreground run was asked about %d times, want once", asked)
	}
	c.prompt(sid, "in the background again")
	if got := lastToolMessage(m.reqs[len(m.reqs)-1]); !strings.Contains(got, "job-2 ended: exit code 0") {
		t.Errorf("after \"always\", the job: %q", got)
	}
	if b, _ := os.ReadFile(out); string(b) != "x\nx\n" {
		t.Errorf("the file: %q, want the foreground's line and the job's", b)
	}
	if asked != 1 {
		t.Errorf("asked %d times in all, want once", asked)
	}
}

// lastToolMessage is the last tool result a model request holds.
func lastToolMessage(req map[string]any) string {
	msgs := req["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msg := msgs[i].(map[string]any); msg["role"] == "tool" {
			return fmt.Sprint(msg["content"])
		}
	}
	return ""
}

// jobEnds counts the job ends the session logs in dir hold.
func jobEnds(dir string) int {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	n := 0
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		n += strings.Count(string(b), `"type":"job/end"`)
	}
	return n
}
