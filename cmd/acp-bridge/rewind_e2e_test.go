package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The rewind through the real binary, with clients that behave as the real
// ones do (agent/rewind.go; README "Rewind").

// airProfile is a client that declares the JetBrains AIR extensions, with
// Zed's file access: it learns the agent's sessionRewind from initialize
// and names messages as AIR does (a local id, the text's fingerprint and
// its occurrence).
var airProfile = clientProfile{name: "AIR",
	caps: map[string]any{
		"fs":    map[string]any{"readTextFile": true, "writeTextFile": true},
		"_meta": map[string]any{"jetbrains": map[string]any{"air": map[string]any{"version": 1, "capabilities": []any{"sessionRewind"}}}},
	},
	info: map[string]any{"name": "air", "version": "1.0"}}

// modelCalls is a model response that calls tools ({name, arguments} pairs).
func modelCalls(cs ...[2]string) func(http.ResponseWriter, map[string]any) {
	var ds []string
	for i, c := range cs {
		args, _ := json.Marshal(c[1])
		ds = append(ds, delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%s_%d","type":"function","function":{"name":%q,"arguments":%s}}]}`, i, c[0], i, c[0], args), ""))
	}
	return answer("tool_calls", ds...)
}

func says(text string) func(http.ResponseWriter, map[string]any) {
	b, _ := json.Marshal(map[string]string{"content": text})
	return answer("stop", delta(string(b), ""))
}

// userTexts are the user messages of a model request, in order.
func userTexts(body map[string]any) []string {
	var out []string
	for _, raw := range body["messages"].([]any) {
		if m := raw.(map[string]any); m["role"] == "user" {
			out = append(out, fmt.Sprint(m["content"]))
		}
	}
	return out
}

func sha(text string) string {
	h := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(h[:])
}

func fileIs(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	got := string(b)
	if os.IsNotExist(err) {
		got = "<none>"
	}
	if got != want {
		t.Errorf("%s = %q, want %q", filepath.Base(path), got, want)
	}
}

// TestBinaryRewind is issue 36's "Done when", v1 part: three prompts, each
// writing or editing a file; `_session/rewind` before the second answers
// {rewound: true}, the next model request holds only the first turn, and a
// new bridge process loading the session replays only the first turn.
// Then /rewind 2 in another session puts the files back as the first
// prompt left them, except one the user changed meanwhile, which it names,
// and says the command's file stays; and a rewind while a turn runs is
// refused as the extension's contract says.
func TestBinaryRewind(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work, state := t.TempDir(), t.TempDir()
	release := make(chan struct{})
	m := &oaiMock{t: t, steps: steps(
		// Session A: three prompts.
		modelCalls([2]string{"write", `{"file_path":"a.txt","content":"one\n"}`}), says("Wrote a.txt."),
		modelCalls([2]string{"read", `{"file_path":"a.txt"}`}), modelCalls([2]string{"edit", `{"file_path":"a.txt","old_string":"one","new_string":"two"}`}), says("Edited a.txt."),
		modelCalls([2]string{"write", `{"file_path":"b.txt","content":"b\n"}`}), says("Wrote b.txt."),
		// Session A, after the rewind, in a new process.
		says("Fourth."),
		// Session B: three prompts, a file the user changes, a command.
		modelCalls([2]string{"write", `{"file_path":"x.txt","content":"x1\n"}`}), says("Made x."),
		modelCalls([2]string{"read", `{"file_path":"x.txt"}`}), modelCalls([2]string{"edit", `{"file_path":"x.txt","old_string":"x1","new_string":"x2"}`},
			[2]string{"write", `{"file_path":"y.txt","content":"y\n"}`}), says("Changed x, made y."),
		modelCalls([2]string{"write", `{"file_path":"z.txt","content":"z\n"}`}, [2]string{"bash", `{"command":"touch made.txt"}`}), says("Made z, ran touch."),
		// A turn that runs while a rewind is asked for.
		func(w http.ResponseWriter, body map[string]any) { <-release; says("Late.")(w, body) },
		// A fork at the first prompt's message goes on from there.
		says("Forked."),
	)}
	srv := httptest.NewServer(m)
	defer srv.Close()
	args := mockArgs(srv, "--state-dir", state)

	c, init := startClient(t, airProfile, mockEnv, args...)
	air := init["_meta"].(map[string]any)["jetbrains"].(map[string]any)["air"].(map[string]any)
	if caps := fmt.Sprint(air["capabilities"]); !strings.Contains(caps, "sessionRewind") || !strings.Contains(caps, "sessionRewindFiles") {
		t.Fatalf("initialize's _meta.jetbrains.air = %v", air)
	}
	sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
	for _, p := range []string{"Write one.", "Edit it.", "Write b."} {
		if r := c.call("session/prompt", textPrompt(sid, p)); r["stopReason"] != "end_turn" {
			t.Fatalf("%s: %v", p, r)
		}
	}
	fileIs(t, filepath.Join(work, "a.txt"), "two\n")

	// AIR names the second prompt: its own id (unknown here), the text's
	// fingerprint, the first occurrence.
	point := map[string]any{"messageId": "air-local-7", "messageFingerprint": sha("Edit it."), "messageOccurrence": 1}
	if _, err := c.request("_session/rewind", map[string]any{"sessionId": sid, "beforeMessage": map[string]any{"messageId": "nope", "messageFingerprint": sha("never said"), "messageOccurrence": 1}}); err == nil || err.Code != -32602 {
		t.Errorf("a message that is not there: %+v, want -32602", err)
	}
	if r := c.call("_session/rewind", map[string]any{"sessionId": sid, "beforeMessage": point}); r["rewound"] != true {
		t.Fatalf("_session/rewind = %v", r)
	}
	// Answered once it is in the log (written and synced before the answer).
	if b, err := os.ReadFile(filepath.Join(state, sid.(string)+".jsonl")); err != nil || !strings.Contains(string(b), `"type":"context/rewind"`) {
		t.Errorf("the log does not hold the rewind when it is answered (%v)", err)
	}
	fileIs(t, filepath.Join(work, "a.txt"), "two\n") // the conversation only
	c.call("session/close", map[string]any{"sessionId": sid})

	// A new process loads it: the first turn only.
	c2, _ := startClient(t, airProfile, mockEnv, args...)
	c2.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}})
	var users []string
	for _, u := range c2.updates("user_message_chunk") {
		users = append(users, u["content"].(map[string]any)["text"].(string))
		if id, _ := u["messageId"].(string); id == "" {
			t.Errorf("a replayed user message without an id: %v", u)
		}
	}
	var text strings.Builder
	for _, u := range c2.updates("agent_message_chunk") {
		text.WriteString(u["content"].(map[string]any)["text"].(string))
		if id, _ := u["messageId"].(string); id == "" {
			t.Errorf("a replayed agent message without an id: %v", u)
		}
	}
	if strings.Join(users, "|") != "Write one." || !strings.Contains(text.String(), "Wrote a.txt.") || strings.Contains(text.String(), "Edited") {
		t.Errorf("the replay after the rewind: users %q, text %q", users, text.String())
	}
	c2.call("session/prompt", textPrompt(sid, "Fourth."))
	if got := userTexts(m.reqs[len(m.reqs)-1]); strings.Join(got, "|") != "Write one.|Fourth." {
		t.Errorf("the request after the rewind holds the user messages %q, want the first turn's and the new one", got)
	}

	// Session B: /rewind 2 puts the files back.
	sid2 := c2.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
	for _, p := range []string{"Make x.", "Change x, make y.", "Make z, run touch."} {
		c2.call("session/prompt", textPrompt(sid2, p))
	}
	fileIs(t, filepath.Join(work, "x.txt"), "x2\n")
	if err := os.WriteFile(filepath.Join(work, "y.txt"), []byte("the user's y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := len(c2.notes)
	c2.call("session/prompt", textPrompt(sid2, "/rewind 2"))
	var said strings.Builder
	for _, note := range c2.notes[n:] {
		if u := note["update"].(map[string]any); u["sessionUpdate"] == "agent_message_chunk" {
			said.WriteString(u["content"].(map[string]any)["text"].(string))
		}
	}
	for _, want := range []string{"Rewound to before prompt 2", "transcript still shows", "- x.txt", "- z.txt (removed: the agent had created it)",
		"- y.txt: it changed since the agent left it", "`touch made.txt`"} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("/rewind 2 did not say %q:\n%s", want, said.String())
		}
	}
	fileIs(t, filepath.Join(work, "x.txt"), "x1\n")
	fileIs(t, filepath.Join(work, "y.txt"), "the user's y\n")
	fileIs(t, filepath.Join(work, "z.txt"), "<none>")
	fileIs(t, filepath.Join(work, "made.txt"), "") // what the command made stays

	// A rewind while a turn runs: {rewound: false, reason: busy}, nothing changed.
	c2.nextID++
	promptID := c2.nextID
	c2.send(map[string]any{"jsonrpc": "2.0", "id": promptID, "method": "session/prompt", "params": textPrompt(sid2, "Take your time.")})
	busy := c2.call("_session/rewind", map[string]any{"sessionId": sid2, "beforeMessage": map[string]any{"messageId": "x", "messageFingerprint": sha("Make x."), "messageOccurrence": 1}})
	close(release)
	if busy["rewound"] != false || busy["reason"] != "busy" {
		t.Errorf("a rewind during a turn = %v, want rewound false, busy", busy)
	}
	// The prompt's answer comes; then the rewind goes through.
	awaitAnswer(c2, promptID)
	if r := c2.call("_session/rewind", map[string]any{"sessionId": sid2, "beforeMessage": map[string]any{"messageId": "x", "messageFingerprint": sha("Take your time."), "messageOccurrence": 1}}); r["rewound"] != true {
		t.Errorf("the rewind after the turn = %v", r)
	}

	// session/fork at a message (AIR's _meta.jetbrains.air.fork): the new
	// session has the history up to it and its turn.
	fork := c2.call("session/fork", map[string]any{"sessionId": sid2, "cwd": work, "mcpServers": []any{},
		"_meta": map[string]any{"jetbrains": map[string]any{"air": map[string]any{"fork": map[string]any{
			"version": 1, "messageId": "local", "messageFingerprint": sha("Make x."), "messageOccurrence": 1}}}}})
	c2.call("session/prompt", textPrompt(fork["sessionId"], "In the fork."))
	if got := userTexts(m.reqs[len(m.reqs)-1]); strings.Join(got, "|") != "Make x.|In the fork." {
		t.Errorf("the fork's request holds the user messages %q, want the first turn's and the new one", got)
	}
}

// awaitAnswer reads until the answer to the request id sent earlier,
// serving the bridge's requests and keeping the updates on the way.
func awaitAnswer(c *zedClient, id int) {
	c.t.Helper()
	for c.out.Scan() {
		var msg struct {
			ID     any             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(c.out.Bytes(), &msg); err != nil {
			c.t.Fatalf("stdout line is not JSON-RPC: %q", c.out.Text())
		}
		switch {
		case msg.Method == "session/update":
			var p map[string]any
			json.Unmarshal(msg.Params, &p)
			c.notes = append(c.notes, p)
		case msg.Method != "" && msg.ID != nil:
			c.serve(msg.ID, msg.Method, msg.Params)
		case msg.ID == float64(id):
			return
		}
	}
	c.t.Fatalf("the bridge closed stdout before answering request %d", id)
}

// TestBinaryRewindV2 is the v2 part: session.rewind is advertised;
// session/edit_prompt runs the edited prompt on the history before the
// message it replaces; session/rewind during a running turn cancels the
// turn first (idle, cancelled), then truncates and says so with
// history_truncated. The draft's rewind is not in the v2 schema yet, so
// these messages are not checked against it.
func TestBinaryRewindV2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	release := make(chan struct{})
	m := &oaiMock{t: t, steps: steps(says("First answer."), says("Second answer."), says("Edited answer."),
		func(w http.ResponseWriter, body map[string]any) {
			// The answer starts and does not end: the turn runs until the
			// rewind cancels it.
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+delta(`{"content":"Working"}`, "")+"\n\n")
			w.(http.Flusher).Flush()
			<-release
		},
		says("After the rewind."),
		// A turn whose answer says something and reads a file, then
		// answers; it is cut after its first words.
		answer("tool_calls", delta(`{"content":"Looking."}`, ""),
			delta(`{"tool_calls":[{"index":0,"id":"call_read","type":"function","function":{"name":"read","arguments":"{\"file_path\":\"notes.txt\"}"}}]}`, "")),
		says("Read it."), says("After the cut."))}
	srv := httptest.NewServer(m)
	defer srv.Close()
	defer close(release) // before the server closes: it waits for its handlers
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin, sc := startBinary(t, mockEnv, mockArgs(srv, "--state-dir", state)...)
	c := &v2line{t: t, in: stdin, out: sc}
	init := c.must("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "go-v2", "version": "1"}, "capabilities": map[string]any{}})
	if rw := init["capabilities"].(map[string]any)["session"].(map[string]any)["rewind"]; fmt.Sprint(rw) != "map[edit_prompt:true]" {
		t.Errorf("capabilities.session.rewind = %v", rw)
	}
	sid := c.must("session/new", map[string]any{"cwd": work})["sessionId"]
	prompt := func(text string) string {
		return c.must("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})["messageId"].(string)
	}
	prompt("First.")
	end := c.waitFor(0, "idle after the first turn", isState("idle", "end_turn"))
	second := prompt("Second.")
	end = c.waitFor(end, "idle after the second turn", isState("idle", "end_turn"))

	if _, code := c.call("session/edit_prompt", map[string]any{"sessionId": sid, "messageId": "msg_never", "content": []any{map[string]any{"type": "text", "text": "x"}}}); code != -32002 {
		t.Errorf("edit_prompt of an unknown message: error %d, want -32002", code)
	}
	edited := c.must("session/edit_prompt", map[string]any{"sessionId": sid, "messageId": second, "content": []any{map[string]any{"type": "text", "text": "Second, edited."}}})
	if id, _ := edited["messageId"].(string); id == "" || id == second {
		t.Errorf("edit_prompt answered %v, want a new message id", edited)
	}
	c.waitFor(end, "history_truncated", func(u map[string]any) bool { return u["sessionUpdate"] == "history_truncated" })
	end = c.waitFor(end, "idle after the edited turn", isState("idle", "end_turn"))
	if got := userTexts(m.reqs[2]); strings.Join(got, "|") != "First.|Second, edited." {
		t.Errorf("the edited prompt ran on %q, want the first turn and the edited prompt", got)
	}

	// The first answer's id, as the client saw it.
	var firstAnswer string
	for _, u := range c.upds {
		if u["sessionUpdate"] == "agent_message_chunk" {
			firstAnswer = u["messageId"].(string)
			break
		}
	}
	prompt("Take your time.")
	at := c.waitFor(end, "the running turn's text", func(u map[string]any) bool {
		return u["sessionUpdate"] == "agent_message_chunk" && strings.Contains(fmt.Sprint(u["content"]), "Working")
	})
	r := c.must("session/rewind", map[string]any{"sessionId": sid, "toMessageId": firstAnswer})
	if r["lastMessageId"] != firstAnswer {
		t.Errorf("session/rewind = %v, want lastMessageId %s", r, firstAnswer)
	}
	cancelled := c.waitFor(at, "idle, cancelled", isState("idle", "cancelled"))
	truncated := c.waitFor(at, "history_truncated", func(u map[string]any) bool {
		return u["sessionUpdate"] == "history_truncated" && u["lastMessageId"] == firstAnswer
	})
	if truncated < cancelled {
		t.Errorf("history_truncated came before the running turn ended")
	}
	prompt("Next.")
	end = c.waitFor(truncated, "idle after the next turn", isState("idle", "end_turn"))
	if got := userTexts(m.reqs[len(m.reqs)-1]); strings.Join(got, "|") != "First.|Next." {
		t.Errorf("after session/rewind the model read %q", got)
	}

	// A rewind to a message inside a turn keeps the log up to it and
	// takes back the rest of the turn: the read it made and its answer.
	prompt("Look.")
	at = c.waitFor(end, "idle after the looking turn", isState("idle", "end_turn"))
	var looking string
	for _, u := range c.upds[end:at] {
		if u["sessionUpdate"] == "agent_message_chunk" && strings.Contains(fmt.Sprint(u["content"]), "Looking.") {
			looking = u["messageId"].(string)
		}
	}
	if r := c.must("session/rewind", map[string]any{"sessionId": sid, "toMessageId": looking}); r["lastMessageId"] != looking {
		t.Errorf("session/rewind to %s answered %v", looking, r)
	}
	truncated = c.waitFor(at, "history_truncated at the message", func(u map[string]any) bool {
		return u["sessionUpdate"] == "history_truncated" && u["lastMessageId"] == looking
	})
	prompt("After the cut?")
	c.waitFor(truncated, "idle after the cut", isState("idle", "end_turn"))
	var msgs []string
	for _, raw := range m.reqs[len(m.reqs)-1]["messages"].([]any) {
		msg := raw.(map[string]any)
		if msg["role"] != "system" {
			msgs = append(msgs, fmt.Sprintf("%s: %v%s", msg["role"], msg["content"], map[bool]string{true: " [calls]"}[msg["tool_calls"] != nil]))
		}
	}
	if want := "user: First.|assistant: First answer.|user: Next.|assistant: After the rewind.|user: Look.|assistant: Looking.|user: After the cut?"; strings.Join(msgs, "|") != want {
		t.Errorf("after the cut the model read\n%s\nwant\n%s", strings.Join(msgs, "|"), want)
	}

	// A new process resumes it from the start: the replay stops at the
	// message, then goes on with what followed the rewind.
	stdin2, sc2 := startBinary(t, mockEnv, mockArgs(srv, "--state-dir", state)...)
	c2 := &v2line{t: t, in: stdin2, out: sc2}
	c2.must("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "go-v2", "version": "1"}, "capabilities": map[string]any{}})
	c2.must("session/resume", map[string]any{"sessionId": sid, "cwd": work, "replayFrom": map[string]any{"type": "start"}})
	var replayed []string
	for _, u := range c2.upds {
		switch u["sessionUpdate"] {
		case "user_message", "agent_message_chunk":
			b, _ := json.Marshal(u["content"])
			replayed = append(replayed, string(b))
		case "tool_call_update":
			replayed = append(replayed, "card "+fmt.Sprint(u["toolCallId"]))
		}
	}
	got := strings.Join(replayed, " ")
	if !strings.Contains(got, "Looking.") || strings.Contains(got, "card") || strings.Contains(got, "Read it.") || !strings.Contains(got, "After the cut") {
		t.Errorf("the replay after the cut: %s", got)
	}
}

// v2line is a v2 client reading the binary's stdout itself, one request
// at a time: what this test needs of one (no permission requests come).
type v2line struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Scanner
	next int
	upds []map[string]any // session/update's update objects, in order
	// waiting is what the client waits for; after never it closes the
	// bridge's stdin, so a wait that would last for ever fails instead.
	waiting string
}

// read takes the next line: an update is kept, an answer returned.
func (c *v2line) read() (id int, result map[string]any, code int) {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("the bridge closed stdout (waiting for %s): %v", c.waiting, c.out.Err())
	}
	var m struct {
		ID     int             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result map[string]any  `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("stdout line is not JSON-RPC: %q", c.out.Text())
	}
	if m.Method == "session/update" {
		var p struct {
			Update map[string]any `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		c.upds = append(c.upds, p.Update)
		return 0, nil, 0
	}
	if m.Error != nil {
		code = m.Error.Code
	}
	return m.ID, m.Result, code
}

func (c *v2line) call(method string, params any) (map[string]any, int) {
	c.t.Helper()
	defer c.wait("the answer to " + method)()
	c.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	c.in.Write(append(b, '\n'))
	for {
		if id, res, code := c.read(); id == c.next {
			return res, code
		}
	}
}

func (c *v2line) must(method string, params any) map[string]any {
	c.t.Helper()
	res, code := c.call(method, params)
	if code != 0 {
		c.t.Fatalf("%s: error %d", method, code)
	}
	return res
}

// waitFor reads until an update from index from on satisfies ok, and
// returns the index after it.
func (c *v2line) waitFor(from int, what string, ok func(map[string]any) bool) int {
	c.t.Helper()
	defer c.wait(what)()
	for i := from; ; i++ {
		for i >= len(c.upds) {
			c.read()
		}
		if ok(c.upds[i]) {
			return i + 1
		}
	}
}

// wait bounds a wait for what; the function it returns ends the bound.
func (c *v2line) wait(what string) func() {
	c.waiting = what
	in := c.in
	timer := time.AfterFunc(never, func() { in.Close() })
	return func() { timer.Stop() }
}

func isState(state, stop string) func(map[string]any) bool {
	return func(u map[string]any) bool {
		return u["sessionUpdate"] == "state_update" && u["state"] == state && (stop == "" || u["stopReason"] == stop)
	}
}
