package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests drive the built bridge with clients that behave as the ACP
// clients nobody on this project wrote do (clientProfile): Emacs
// agent-shell, codecompanion.nvim and the AI SDK provider, beside Zed.

// mockArgs points the bridge at an oaiMock.
func mockArgs(srv *httptest.Server, more ...string) []string {
	return append([]string{"--base-url", srv.URL + "/v1", "--model", "mock-1", "--api-key-env", "MOCK_KEY"}, more...)
}

var mockEnv = []string{"MOCK_KEY=sk-e2e"}

func steps(fs ...func(http.ResponseWriter, map[string]any)) []func(http.ResponseWriter, map[string]any) {
	return fs
}

// answer is a step that streams payloads and ends the response.
func answer(finish string, payloads ...string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, _ map[string]any) {
		sseWrite(w, 1<<20, append(payloads, delta(`{}`, finish))...)
	}
}

func textPrompt(sid any, texts ...string) map[string]any {
	var blocks []any
	for _, t := range texts {
		blocks = append(blocks, map[string]any{"type": "text", "text": t})
	}
	return map[string]any{"sessionId": sid, "prompt": blocks}
}

// lastUserMessage is the last user message of a request body.
func lastUserMessage(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i].(map[string]any); m["role"] == "user" {
			return fmt.Sprint(m["content"])
		}
	}
	return ""
}

// Point 5: codecompanion re-sends a stopped message as a second text
// block. The model reads two paragraphs, not "a bitNow fail", and a load
// in the next chat's process replays them the same way.
func TestBinaryCodeCompanionSecondBlock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	m := &oaiMock{t: t, steps: steps(answer("stop", delta(`{"content":"Sleeping, then failing."}`, "")))}
	srv := httptest.NewServer(m)
	defer srv.Close()
	state := t.TempDir()
	work := t.TempDir()

	c, _ := startClient(t, codeCompanionProfile, mockEnv, mockArgs(srv, "--state-dir", state)...)
	sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
	c.call("session/prompt", textPrompt(sid, "Please sleep a bit", "Now fail twice"))
	if got := lastUserMessage(m.reqs[0]); got != "Please sleep a bit\n\nNow fail twice" {
		t.Errorf("the model read %q", got)
	}

	// The next chat is another process (codecompanion starts one per chat).
	c.call("session/close", map[string]any{"sessionId": sid})
	c2, _ := startClient(t, codeCompanionProfile, mockEnv, mockArgs(srv, "--state-dir", state)...)
	c2.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}})
	var shown strings.Builder
	for _, u := range c2.updates("user_message_chunk") {
		shown.WriteString(u["content"].(map[string]any)["text"].(string))
	}
	if shown.String() != "Please sleep a bit\n\nNow fail twice" {
		t.Errorf("the replayed message reads %q", shown.String())
	}
}

// Point 10: acp.el reads a capability that is present as supported, even
// when false. No false appears in agentCapabilities.
func TestBinaryNoFalseCapabilities(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	_, init := startClient(t, agentShellProfile, nil)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case bool:
			if !v {
				t.Errorf("%s is false: a client reading presence shows it as supported", path)
			}
		case map[string]any:
			for k, x := range v {
				walk(path+"."+k, x)
			}
		}
	}
	caps := init["agentCapabilities"].(map[string]any)
	walk("agentCapabilities", caps)
	if pc := caps["promptCapabilities"].(map[string]any); pc["embeddedContext"] != true {
		t.Errorf("promptCapabilities = %v, want embeddedContext", pc)
	}
}

// Point 14: a client on the stable schema finds no unstable field at the
// root of the session/prompt result; the turn's tokens are in _meta.usage.
func TestBinaryPromptUsageInMeta(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	m := &oaiMock{t: t, steps: steps(answer("stop", delta(`{"content":"Hi."}`, ""), usageOf(120, 8)))}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c, _ := startClient(t, agentShellProfile, mockEnv, mockArgs(srv)...)
	sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
	res := c.call("session/prompt", textPrompt(sid, "hi"))
	for k := range res {
		if k != "stopReason" && k != "_meta" {
			t.Errorf("the prompt result has %q at its root: %v", k, res)
		}
	}
	meta, _ := res["_meta"].(map[string]any)
	if u, _ := meta["usage"].(map[string]any); u["inputTokens"] != float64(120) || u["outputTokens"] != float64(8) || u["totalTokens"] != float64(128) {
		t.Errorf("_meta.usage = %v", meta["usage"])
	}
}

// Point 2: colour codes reach a client that renders terminals (Zed's
// terminal_output) and nobody else: not agent-shell's text card, not the
// model.
func TestBinaryColourCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const cmd = `printf '\033[31mred\033[0m plain\n'`
	for _, p := range []clientProfile{agentShellProfile, zedProfile} {
		t.Run(p.name, func(t *testing.T) {
			m := &oaiMock{t: t, steps: steps(
				answer("tool_calls", toolCall("c_bash", "bash", fmt.Sprintf(`{"command":%q,"description":"Colours"}`, cmd))),
				answer("stop", delta(`{"content":"Done."}`, "")))}
			srv := httptest.NewServer(m)
			defer srv.Close()
			c, _ := startClient(t, p, mockEnv, mockArgs(srv, "--permission-mode", "bypass")...)
			sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
			c.call("session/prompt", textPrompt(sid, "colours"))

			if got := toolResultIn(m.reqs[1], "c_bash"); strings.Contains(got, "\x1b") || !strings.Contains(got, "red plain") {
				t.Errorf("the model read %q", got)
			}
			var shown, terminal strings.Builder
			for _, u := range c.card("c_bash") {
				for _, it := range asList(u["content"]) {
					if cc, ok := it.(map[string]any)["content"].(map[string]any); ok {
						shown.WriteString(fmt.Sprint(cc["text"]))
					}
				}
				if meta, ok := u["_meta"].(map[string]any); ok {
					if o, ok := meta["terminal_output"].(map[string]any); ok {
						terminal.WriteString(o["data"].(string))
					}
				}
			}
			if strings.Contains(shown.String(), "\x1b") {
				t.Errorf("%s: escape codes in the card's text: %q", p.name, shown.String())
			}
			if p.name == "Zed" {
				if !strings.Contains(terminal.String(), "\x1b[31mred\x1b[0m") {
					t.Errorf("Zed's terminal lost its colours: %q", terminal.String())
				}
			} else if !strings.Contains(shown.String(), "red plain") {
				t.Errorf("%s: the card shows %q", p.name, shown.String())
			}
		})
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// Point 4: the advice for a missing key names the settings of the editor
// in use, and another editor's never.
func TestBinaryKeyAdviceForTheEditor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tests := []struct {
		p         clientProfile
		want      string
		notWanted string
	}{
		{agentShellProfile, ":environment-variables", "agent_servers"},
		{codeCompanionProfile, "acp_bridge adapter", "agent_servers"},
		{aiSDKProfile, "your editor's settings for this agent", "Zed"},
		{zedProfile, `"agent_servers" in settings.json`, "CodeCompanion"},
	}
	for _, tt := range tests {
		t.Run(tt.p.name, func(t *testing.T) {
			c, _ := startClient(t, tt.p, nil)
			sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
			_, err := c.request("session/prompt", textPrompt(sid, "hi"))
			if err == nil || err.Code != -32000 {
				t.Fatalf("error %+v, want -32000", err)
			}
			if !strings.Contains(err.Message, tt.want) || strings.Contains(err.Message, tt.notWanted) {
				t.Errorf("message %q: want %q, not %q", err.Message, tt.want, tt.notWanted)
			}
		})
	}
}

// Point 3: acp.el shows every stderr chunk as an error. A failure the
// editor is told about (a retry notice, the failed prompt's error) is not
// also a log line at the default level.
func TestBinaryQuietStderrForToldFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	fail := func(w http.ResponseWriter, _ map[string]any) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"error":{"message":"overloaded"}}`)
	}
	m := &oaiMock{t: t, steps: steps(fail, fail)}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c, _ := startClient(t, agentShellProfile, mockEnv, mockArgs(srv, "--retries", "1")...)
	sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
	_, err := c.request("session/prompt", textPrompt(sid, "hi"))
	if err == nil || !strings.Contains(err.Message, "503") {
		t.Fatalf("error %+v, want the failed request", err)
	}
	var told strings.Builder
	for _, u := range c.updates("agent_message_chunk") {
		told.WriteString(fmt.Sprint(u["content"].(map[string]any)["text"]))
	}
	if !strings.Contains(told.String(), "retrying") {
		t.Errorf("the retry was not shown: %q", told.String())
	}
	if s := withoutOffNote(c.stderr()); s != "" {
		t.Errorf("stderr at the default level, shown by acp.el as errors:\n%s", s)
	}
}

// Point 6: in Code Mode, agent-shell shows the program beside its result
// on the finished card, and the "always" option says what it covers.
func TestBinaryCodeModeInAPlainClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	program := `const r = await tools.bash({command: "echo from the program"}); console.log(r.stdout.text);`
	m := &oaiMock{t: t, steps: steps(
		answer("tool_calls", toolCall("c_run", "run_code", fmt.Sprintf(`{"code":%q,"description":"Say hello"}`, program))),
		answer("stop", delta(`{"content":"Done."}`, "")))}
	srv := httptest.NewServer(m)
	defer srv.Close()
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "x.txt"), []byte("x\n"), 0o644)
	c, _ := startClient(t, agentShellProfile, mockEnv, mockArgs(srv, "--tools-mode", "code")...)
	sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
	c.call("session/prompt", textPrompt(sid, "hello"))

	cards := c.card("c_run")
	if len(cards) == 0 {
		t.Fatal("no run_code card")
	}
	last := cards[len(cards)-1]
	var texts []string
	for _, it := range asList(last["content"]) {
		if cc, ok := it.(map[string]any)["content"].(map[string]any); ok {
			texts = append(texts, fmt.Sprint(cc["text"]))
		}
	}
	if last["status"] != "completed" || len(texts) < 2 || !strings.Contains(texts[0], "echo from the program") || !strings.Contains(texts[1], "from the program") {
		t.Errorf("final run_code card: %v", last)
	}
	if len(c.perms) == 0 {
		t.Fatal("no permission asked for the program's command")
	}
	names := map[string]string{}
	for _, o := range asList(c.perms[0]["options"]) {
		o := o.(map[string]any)
		names[o["kind"].(string)] = o["name"].(string)
	}
	if names["allow_always"] != "Always allow echo from commands" {
		t.Errorf("allow_always option %q, want it to say what it covers", names["allow_always"])
	}
	for _, n := range names {
		if strings.HasSuffix(n, "…") {
			t.Errorf("option name cut: %q", n)
		}
	}
}

// Point 9: an app on the AI SDK provider takes rawOutput as the tool's
// result: the command's output for bash, the error text for a failed call
// (which it reads as content items). Its session/set_model is answered as
// the model config option is, and a prompt sent while a turn runs is
// answered after it, not refused.
func TestBinaryAISDKProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	m := &oaiMock{t: t, steps: steps(
		answer("tool_calls", toolCall("c_bash", "bash", `{"command":"echo the output; echo a warning >&2","description":"Print"}`)),
		answer("tool_calls", toolCall("c_missing", "read", `{"file_path":"missing.txt"}`)),
		answer("stop", delta(`{"content":"Done."}`, "")),
		answer("stop", delta(`{"content":"One."}`, "")),
		answer("stop", delta(`{"content":"Two."}`, "")))}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c, _ := startClient(t, aiSDKProfile, mockEnv, mockArgs(srv)...)
	sess := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	sid := sess["sessionId"]
	c.call("session/prompt", textPrompt(sid, "run it"))

	// What the provider hands the app: rawOutput, and for a failed call
	// the text of its content items (formatToolError).
	final := func(id string) map[string]any {
		cards := c.card(id)
		return cards[len(cards)-1]
	}
	itemsText := func(raw any) string {
		var parts []string
		for _, blk := range asList(raw) {
			b := blk.(map[string]any)
			if cc, ok := b["content"].(map[string]any); ok && b["type"] == "content" && cc["type"] == "text" {
				parts = append(parts, cc["text"].(string))
			}
		}
		return strings.Join(parts, "\n")
	}
	if got := itemsText(final("c_bash")["rawOutput"]); !strings.Contains(got, "the output") || !strings.Contains(got, "a warning") || !strings.Contains(got, "[exit code: 0]") {
		t.Errorf("bash rawOutput gives the app %q; card %v", got, final("c_bash"))
	}
	if f := final("c_missing"); f["status"] != "failed" || !strings.Contains(itemsText(f["rawOutput"]), "file not found") {
		t.Errorf("a failed call's rawOutput gives the app %q; card %v", itemsText(f["rawOutput"]), f)
	}

	// session/set_model, as the model config option.
	var current string
	for _, o := range asList(sess["configOptions"]) {
		if o := o.(map[string]any); o["id"] == "model" {
			current = o["currentValue"].(string)
		}
	}
	res := c.call("session/set_model", map[string]any{"sessionId": sid, "modelId": current})
	if len(asList(res["configOptions"])) == 0 {
		t.Errorf("session/set_model answered %v", res)
	}
	if _, err := c.request("session/set_model", map[string]any{"sessionId": sid, "modelId": "no/such-model"}); err == nil || err.Code != -32602 {
		t.Errorf("session/set_model of an unknown model: %+v, want -32602 as the config option gives", err)
	}

	// Two prompts at once: both answered, in order.
	results, errs := c.concurrent([2]any{"session/prompt", textPrompt(sid, "one")}, [2]any{"session/prompt", textPrompt(sid, "two")})
	for i, r := range results {
		if errs[i] != nil || r["stopReason"] != "end_turn" {
			t.Errorf("prompt %d: %v, %+v", i+1, r, errs[i])
		}
	}
	if len(m.reqs) != 5 || lastUserMessage(m.reqs[3]) != "one" || lastUserMessage(m.reqs[4]) != "two" {
		t.Errorf("the model saw %d requests; the last two for %q, %q", len(m.reqs), lastUserMessage(m.reqs[3]), lastUserMessage(m.reqs[4]))
	}
}

// Point 8: codecompanion opens a process per chat; chats opened and never
// used do not fill the session picker, and stay loadable.
func TestBinaryUnusedChatsNotListed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	m := &oaiMock{t: t, steps: steps(answer("stop", delta(`{"content":"Hi."}`, "")))}
	srv := httptest.NewServer(m)
	defer srv.Close()
	state, work := t.TempDir(), t.TempDir()
	var ids []any
	for i := range 3 {
		c, _ := startClient(t, codeCompanionProfile, mockEnv, mockArgs(srv, "--state-dir", state)...)
		sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
		ids = append(ids, sid)
		if i == 1 {
			c.call("session/prompt", textPrompt(sid, "the one used chat"))
		}
		c.call("session/close", map[string]any{"sessionId": sid})
	}
	c, _ := startClient(t, codeCompanionProfile, mockEnv, mockArgs(srv, "--state-dir", state)...)
	list := asList(c.call("session/list", map[string]any{"cwd": work})["sessions"])
	if len(list) != 1 || list[0].(map[string]any)["sessionId"] != ids[1] || list[0].(map[string]any)["title"] != "the one used chat" {
		t.Errorf("session/list = %v, want only the used chat %v", list, ids[1])
	}
	c.call("session/load", map[string]any{"sessionId": ids[0], "cwd": work, "mcpServers": []any{}}) // unlisted, still there
}

// Point 1: the diff the user approves is the diff that is applied. The
// pending card and the permission request carry the hunks computed from
// the file as it is now, with the context lines and final newline the
// completed card has (agent-shell renders oldText/newText as given).
func TestBinaryApprovedDiffIsAppliedDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, p := range []clientProfile{agentShellProfile, codeCompanionProfile, zedProfile} {
		t.Run(p.name, func(t *testing.T) {
			work := t.TempDir()
			file := filepath.Join(work, "notes.txt")
			os.WriteFile(file, []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\n"), 0o644)
			m := &oaiMock{t: t, steps: steps(
				answer("tool_calls", toolCall("c_read", "read", `{"file_path":"notes.txt"}`)),
				answer("tool_calls", toolCall("c_edit", "edit", `{"file_path":"notes.txt","old_string":"four","new_string":"FOUR"}`)),
				answer("stop", delta(`{"content":"Done."}`, "")))}
			srv := httptest.NewServer(m)
			defer srv.Close()
			c, _ := startClient(t, p, mockEnv, mockArgs(srv)...)
			sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
			c.call("session/prompt", textPrompt(sid, "edit it"))
			if b, _ := os.ReadFile(file); string(b) != "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n" {
				t.Fatalf("file = %q", b)
			}
			diffOf := func(u map[string]any) map[string]any {
				for _, it := range asList(u["content"]) {
					if it := it.(map[string]any); it["type"] == "diff" {
						return it
					}
				}
				return nil
			}
			cards := c.card("c_edit")
			pending, completed := diffOf(cards[0]), diffOf(cards[len(cards)-1])
			if completed == nil || cards[len(cards)-1]["status"] != "completed" {
				t.Fatalf("completed card: %v", cards[len(cards)-1])
			}
			if !strings.HasSuffix(completed["oldText"].(string), "\n") || !strings.Contains(completed["oldText"].(string), "three\nfour\nfive") {
				t.Errorf("the completed card's hunk lacks its context: %v", completed)
			}
			if fmt.Sprint(pending) != fmt.Sprint(completed) {
				t.Errorf("pending card's diff\n%v\nis not the applied one\n%v", pending, completed)
			}
			if len(c.perms) != 1 {
				t.Fatalf("%d permission requests, want 1", len(c.perms))
			}
			asked := diffOf(c.perms[0]["toolCall"].(map[string]any))
			if fmt.Sprint(asked) != fmt.Sprint(completed) {
				t.Errorf("the permission request's diff\n%v\nis not the applied one\n%v", asked, completed)
			}
		})
	}
}

// Point 7: codecompanion runs one bridge per chat, and its /resume asks a
// new chat's bridge for a session another chat's bridge holds. An idle
// session is handed over: the old chat is told where it went, and a prompt
// there is refused saying how to take it back. A session running a turn is
// not taken: the resume fails saying what to do. Never a silent new session.
func TestBinaryResumeHeldByAnotherChat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	release := make(chan struct{})
	m := &oaiMock{t: t, steps: steps(
		answer("stop", delta(`{"content":"First answer."}`, "")),
		func(w http.ResponseWriter, _ map[string]any) { // the old chat's second turn: slow
			<-release
			sseWrite(w, 1<<20, delta(`{"content":"Slow answer."}`, "stop"))
		},
		answer("stop", delta(`{"content":"Answer in the new chat."}`, "")))}
	srv := httptest.NewServer(m)
	defer srv.Close()
	state, work := t.TempDir(), t.TempDir()
	args := mockArgs(srv, "--state-dir", state)

	old, _ := startClient(t, codeCompanionProfile, mockEnv, args...)
	sid := old.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"].(string)
	old.call("session/prompt", textPrompt(sid, "hello"))

	// Busy: the old chat runs a turn; the new chat's resume is refused.
	old.nextID++
	old.send(map[string]any{"jsonrpc": "2.0", "id": old.nextID, "method": "session/prompt", "params": textPrompt(sid, "think slowly")})
	holder := filepath.Join(state, sid+".jsonl.holder")
	waitForFile(t, holder, `"busy":true`)
	fresh, _ := startClient(t, codeCompanionProfile, mockEnv, args...)
	_, err := fresh.request("session/resume", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}})
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "running a turn") || !strings.Contains(err.Message, "resume the session again") {
		t.Fatalf("resume of a busy session: %+v, want -32602 saying it runs a turn and what to do", err)
	}
	close(release)
	for old.out.Scan() { // the slow prompt's answer
		var msg map[string]any
		json.Unmarshal(old.out.Bytes(), &msg)
		if msg["id"] == float64(old.nextID) {
			break
		}
	}

	// Idle: handed over.
	res := fresh.call("session/resume", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}})
	if res == nil {
		t.Fatal("resume answered nothing")
	}
	if r := fresh.call("session/prompt", textPrompt(sid, "go on here")); r["stopReason"] != "end_turn" {
		t.Errorf("prompt in the new chat: %v", r)
	}
	_, err = old.request("session/prompt", textPrompt(sid, "still here?"))
	if err == nil || !strings.Contains(err.Message, "continues in another window") || !strings.Contains(err.Message, "resume it here") {
		t.Errorf("prompt in the old chat after the hand-over: %+v", err)
	}
	var told strings.Builder
	for _, u := range old.updates("agent_message_chunk") {
		told.WriteString(fmt.Sprint(u["content"].(map[string]any)["text"]))
	}
	if !strings.Contains(told.String(), "continues in another window") {
		t.Errorf("the old chat was not told: %q", told.String())
	}
	if lastUserMessage(m.reqs[len(m.reqs)-1]) != "go on here" || !strings.Contains(fmt.Sprint(m.reqs[len(m.reqs)-1]["messages"]), "Slow answer.") {
		t.Errorf("the new chat's request lacks the thread: %v", m.reqs[len(m.reqs)-1]["messages"])
	}
}

// waitForFile polls until path holds want (a state, not a time: it fails
// only if it never does).
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	for range 2000 {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never held %s", path, want)
}
