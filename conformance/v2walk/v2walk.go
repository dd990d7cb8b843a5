// Package v2walk is one walk through a session in the ACP v2 draft's
// dialect, by a client on raw JSON-RPC lines that checks every line both
// ways against the v2 schema (acpschema.V2; unchecked without it). The
// agent's tests run it in memory (agent/v2_test.go) and the binary's
// through the real stdio (cmd/acp-bridge/v2_e2e_test.go), so the two
// cannot drift apart. It knows the wire only: it imports nothing of the
// bridge.
package v2walk

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// Model is the scripted model (model.Script's JSON, as --model script:
// reads it) the walk expects: a turn whose bash command asks permission
// and prints two lines, its answer, then a command that runs until the
// walk cancels it.
const Model = `{"responses":[
	{"parts":[{"text":"Listing."},{"tool_call":{"id":"c1","name":"bash","arguments":{"command":"printf 'one\\ntwo\\n'"}}}]},
	{"parts":[{"text":"Done."}]},
	{"parts":[{"tool_call":{"id":"c2","name":"bash","arguments":{"command":"echo started; sleep 30"}}}]}]}`

// Start starts an agent on the walk's session store, a new process as far
// as sessions go (the second call must find what the first one wrote), and
// returns its stdin and stdout. Closing stdin must end the agent and, in
// time, its stdout.
type Start func(t *testing.T) (stdin io.WriteCloser, stdout io.Reader)

// bound tells an agent that never answers from one that is late on a busy
// machine.
const bound = 60 * time.Second

// Codes of the JSON-RPC errors the walk expects.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// Walk drives two agents from start over the session in cwd: initialize
// (v2, experimental), session/new (modes as a config option),
// set_config_option by value type, session/load refused; a prompt answered
// at once whose command asks permission and runs in a display terminal; a
// prompt cancelled while its command runs; list and close. Then the second
// agent resumes the session from the replay cursor the first gave (the
// second turn, then the idle snapshot, all before the answer) and from the
// start (the first turn too, with the message id its prompt was answered
// with).
func Walk(t *testing.T, cwd string, start Start) {
	t.Helper()
	schema, err := acpschema.V2()
	if err != nil {
		t.Fatal(err)
	}
	if schema == nil {
		t.Log("no ACP v2 schema beside the checkout: messages are not checked against it")
	}
	c := dial(t, schema, start)
	init := c.must("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "v2walk", "version": "1"}, "capabilities": map[string]any{}})
	caps, _ := init["capabilities"].(map[string]any)
	meta, _ := init["_meta"].(map[string]any)
	if init["protocolVersion"] != float64(2) || caps["session"] == nil || meta["acpBridge/experimental"] == nil {
		t.Fatalf("initialize = %v", init)
	}
	ns := c.must("session/new", map[string]any{"cwd": cwd})
	sid, _ := ns["sessionId"].(string)
	opts, _ := ns["configOptions"].([]any)
	if sid == "" || len(opts) == 0 || opts[0].(map[string]any)["configId"] == nil || ns["modes"] != nil {
		t.Fatalf("session/new = %v", ns)
	}

	// Modes are a config option; values go by type (id or boolean).
	for _, set := range []map[string]any{
		{"sessionId": sid, "configId": "mode", "type": "id", "value": "accept-edits"},
		{"sessionId": sid, "configId": "mode", "type": "id", "value": "ask"},
		{"sessionId": sid, "configId": "show_thoughts", "type": "boolean", "value": true},
	} {
		r := c.must("session/set_config_option", set)
		found := false
		for _, o := range r["configOptions"].([]any) {
			if o := o.(map[string]any); o["configId"] == set["configId"] {
				found = o["currentValue"] == set["value"]
			}
		}
		if !found {
			t.Errorf("set_config_option %v answered %v", set, r)
		}
	}
	if a := c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "type": "weird", "value": "ask"}); a.Error == nil || a.Error.Code != codeInvalidParams {
		t.Errorf("an unknown value type: %v", a.Error)
	}
	if a := c.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); a.Error == nil || a.Error.Code != codeMethodNotFound {
		t.Errorf("session/load on v2: %v", a.Error)
	}
	mark := len(c.updates())

	// A prompt answers at once with its message's id; the turn follows.
	pr := c.must("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "list it"}}})
	msgID, _ := pr["messageId"].(string)
	end := c.waitUpdate(mark, "idle after the first turn", isState("idle", "end_turn"))
	first := convo(c.updates()[mark:end])
	want := []string{"user_message", "state_update running", "agent_message_chunk", "terminal_update", "tool_call_update pending",
		"state_update requires_action", "state_update running", "tool_call_update in_progress", "terminal_output_chunk",
		"terminal_update exit", "tool_call_update completed", "agent_message_chunk", "state_update idle end_turn"}
	if got := shape(first); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("first turn:\n got %v\nwant %v", got, want)
	}
	if u := first[0]; u["messageId"] != msgID || msgID == "" {
		t.Errorf("user_message %v, prompt answered %q", u, msgID)
	}
	if out := terminalOutput(t, first); out != "one\ntwo\n" {
		t.Errorf("terminal output %q", out)
	}
	var cursor any
	for _, u := range first {
		switch u["sessionUpdate"] {
		case "terminal_update":
			st, exit := u["exitStatus"].(map[string]any)
			if !exit && (u["terminalId"] != "c1" || u["command"] != "printf 'one\\ntwo\\n'" || u["cwd"] != cwd) {
				t.Errorf("terminal_update %v", u)
			}
			if exit && st["exitCode"] != float64(0) {
				t.Errorf("exit status %v", st)
			}
		case "agent_message_chunk":
			if u["messageId"] == nil {
				t.Errorf("agent message without an id: %v", u)
			}
		case "state_update":
			if m, _ := u["_meta"].(map[string]any); u["state"] == "idle" {
				cursor = m["replayFrom"]
			}
		}
	}
	if cursor == nil {
		t.Fatal("no replay cursor on the idle state")
	}
	perms := c.permissions()
	if len(perms) != 1 {
		t.Fatalf("permission requests: %v", perms)
	}
	if subj, _ := perms[0]["subject"].(map[string]any); subj["type"] != "tool_call" || perms[0]["title"] == "" {
		t.Errorf("permission request %v", perms[0])
	}

	// A prompt cancelled while its command runs ends idle, cancelled.
	pr2 := c.must("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "wait"}}})
	running := c.waitUpdate(end, "the command's output", func(u map[string]any) bool { return u["sessionUpdate"] == "terminal_output_chunk" })
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	end2 := c.waitUpdate(running, "idle after the cancel", isState("idle", "cancelled"))
	second := convo(c.updates()[end:end2])
	if second[0]["sessionUpdate"] != "user_message" || second[0]["messageId"] != pr2["messageId"] {
		t.Errorf("second turn starts with %v", second[0])
	}

	list := c.must("session/list", map[string]any{})
	if ss, _ := list["sessions"].([]any); len(ss) != 1 || ss[0].(map[string]any)["sessionId"] != sid {
		t.Errorf("session/list = %v", list)
	}
	c.must("session/close", map[string]any{"sessionId": sid})
	c.end()

	// A new agent resumes from the cursor: the second turn is replayed,
	// then the current state.
	c2 := dial(t, schema, start)
	c2.must("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "v2walk", "version": "1"}})
	if a := c2.call("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": map[string]any{"type": "bogus"}}); a.Error == nil || a.Error.Code != codeInvalidParams {
		t.Errorf("an unknown cursor: %v", a.Error)
	}
	res := c2.call("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": cursor})
	if res.Error != nil {
		t.Fatalf("resume: %v", res.Error)
	}
	replayed := convo(c2.updates()[:res.before]) // all of it before the response
	if len(replayed) < 2 || replayed[0]["sessionUpdate"] != "user_message" || replayed[0]["messageId"] != pr2["messageId"] {
		t.Fatalf("replay from the cursor starts with %v", replayed[:min(len(replayed), 1)])
	}
	if last := replayed[len(replayed)-1]; !isState("idle", "cancelled")(last) {
		t.Errorf("the resume's last update is %v, want the idle snapshot", last)
	}
	for _, u := range replayed {
		if u["messageId"] == msgID {
			t.Errorf("the replay from the cursor has the first turn: %v", u)
		}
	}
	// From the start: the first turn too, with the id it was answered with.
	n := len(c2.updates())
	res = c2.call("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": map[string]any{"type": "start"}})
	if res.Error != nil || res.before < n {
		t.Fatalf("resume from the start: %v (%d updates before its answer, %d before it was sent)", res.Error, res.before, n)
	}
	again := convo(c2.updates()[n:res.before])
	if len(again) == 0 || again[0]["sessionUpdate"] != "user_message" || again[0]["messageId"] != msgID {
		t.Fatalf("replay from the start begins with %v", again[:min(len(again), 1)])
	}
	if got := shape(again); len(got) < len(want) || strings.Join(got[:len(want)], ",") != strings.Join(want, ",") {
		t.Errorf("replayed first turn:\n got %v\nwant %v", got, want)
	}
	c2.end()
	if schema != nil {
		for _, cl := range []*client{c, c2} {
			if u := cl.check.Unchecked(); len(u) > 0 {
				t.Errorf("unchecked: %v", u)
			}
		}
	}
}

// client is a v2 client on one agent's stdio: requests by id, session
// updates in order, permission requests answered allow-once, any other
// request refused.
type client struct {
	t      *testing.T
	in     io.WriteCloser
	done   chan struct{} // closed when the agent's stdout has ended
	mu     sync.Mutex
	wmu    sync.Mutex
	next   int
	waits  map[string]chan answer
	upds   []map[string]any // params.update of each session/update, in order
	change chan struct{}    // closed (and replaced) when upds grows
	perms  []map[string]any
	check  *acpschema.Checker
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) String() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

type answer struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
	before int             // updates received before the response
}

func dial(t *testing.T, schema *acpschema.Schema, start Start) *client {
	t.Helper()
	stdin, stdout := start(t)
	c := &client{t: t, in: stdin, done: make(chan struct{}), waits: map[string]chan answer{}, change: make(chan struct{})}
	if schema != nil {
		c.check = acpschema.NewChecker(schema)
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			c.read(append([]byte(nil), sc.Bytes()...))
		}
	}()
	// Runs before start's own clean-up (last registered, first run), so
	// nothing reads and reports after the test.
	t.Cleanup(c.end)
	return c
}

// end closes the agent's stdin and waits for its stdout to end.
func (c *client) end() {
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(bound):
		c.t.Errorf("the agent's stdout did not end within %v of its stdin closing", bound)
	}
}

func (c *client) checkLine(dir acpschema.Direction, line []byte) {
	if c.check == nil {
		return
	}
	if err := c.check.Check(dir, line); err != nil {
		c.t.Errorf("not valid against the v2 schema: %v\n%s", err, line)
	}
}

func (c *client) write(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Error(err)
		return
	}
	if v["method"] != "session/load" { // sent on purpose: not v2
		c.checkLine(acpschema.ToAgent, b)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Errorf("write: %v", err)
	}
}

func (c *client) read(line []byte) {
	c.checkLine(acpschema.FromAgent, line)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		answer
	}
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Errorf("stdout line is not JSON: %s: %v", line, err)
		return
	}
	switch m.Method {
	case "session/update":
		var p struct {
			Update map[string]any `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		c.upds = append(c.upds, p.Update)
		close(c.change)
		c.change = make(chan struct{})
		c.mu.Unlock()
	case "session/request_permission":
		var p map[string]any
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		c.perms = append(c.perms, p)
		c.mu.Unlock()
		go c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
	case "":
		c.mu.Lock()
		ch := c.waits[string(m.ID)]
		m.before = len(c.upds)
		c.mu.Unlock()
		if ch != nil {
			ch <- m.answer
		}
	default:
		if len(m.ID) > 0 {
			go c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": codeMethodNotFound, "message": "no"}})
		}
	}
}

// call sends a request and waits for its answer.
func (c *client) call(method string, params any) answer {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan answer, 1)
	c.waits[fmt.Sprint(id)] = ch
	c.mu.Unlock()
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case a := <-ch:
		return a
	case <-time.After(bound):
		c.t.Fatalf("%s: no answer within %v", method, bound)
		return answer{}
	}
}

// must is call for a request that must succeed, with its result decoded.
func (c *client) must(method string, params any) map[string]any {
	c.t.Helper()
	a := c.call(method, params)
	if a.Error != nil {
		c.t.Fatalf("%s: %v", method, a.Error)
	}
	var out map[string]any
	_ = json.Unmarshal(a.Result, &out)
	return out
}

func (c *client) notify(method string, params any) {
	c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// waitUpdate waits until an update from index from on satisfies ok, and
// returns the index after it.
func (c *client) waitUpdate(from int, what string, ok func(map[string]any) bool) int {
	c.t.Helper()
	deadline := time.After(bound)
	for {
		c.mu.Lock()
		for i := from; i < len(c.upds); i++ {
			if ok(c.upds[i]) {
				c.mu.Unlock()
				return i + 1
			}
		}
		ch := c.change
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("no %s within %v", what, bound)
		}
	}
}

func (c *client) updates() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.upds...)
}

func (c *client) permissions() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.perms...)
}

// bookkeeping is the session's own news (commands, usage, title,
// options, and notices: a retry, an MCP server, a sandbox the user turned
// off), which may come between a turn's updates.
func bookkeeping(u map[string]any) bool {
	switch u["sessionUpdate"] {
	case "available_commands_update", "usage_update", "session_info_update", "config_option_update", "notice":
		return true
	}
	return false
}

// convo leaves out the bookkeeping.
func convo(ups []map[string]any) []map[string]any {
	var out []map[string]any
	for _, u := range ups {
		if !bookkeeping(u) {
			out = append(out, u)
		}
	}
	return out
}

func isState(state, stop string) func(map[string]any) bool {
	return func(u map[string]any) bool {
		return u["sessionUpdate"] == "state_update" && u["state"] == state && (stop == "" || u["stopReason"] == stop)
	}
}

// shape summarises a turn's updates: their kinds (states with the state
// and stop reason, tool call updates with their status, terminal updates
// that carry the exit), leaving out bookkeeping, and runs of output chunks
// as one (live output is coalesced by time).
func shape(ups []map[string]any) []string {
	var out []string
	for _, u := range convo(ups) {
		k, _ := u["sessionUpdate"].(string)
		switch k {
		case "state_update":
			k += " " + fmt.Sprint(u["state"])
			if r, ok := u["stopReason"]; ok {
				k += " " + fmt.Sprint(r)
			}
		case "tool_call_update":
			if s, ok := u["status"]; ok {
				k += " " + fmt.Sprint(s)
			}
		case "terminal_update":
			if _, ok := u["exitStatus"]; ok {
				k += " exit"
			}
		}
		if len(out) > 0 && out[len(out)-1] == k && (k == "terminal_output_chunk" || k == "agent_message_chunk") {
			continue
		}
		out = append(out, k)
	}
	return out
}

// terminalOutput is what the terminal_output_chunks of ups say, decoded.
func terminalOutput(t *testing.T, ups []map[string]any) string {
	var b strings.Builder
	for _, u := range ups {
		if u["sessionUpdate"] == "terminal_output_chunk" {
			d, err := base64.StdEncoding.DecodeString(fmt.Sprint(u["data"]))
			if err != nil {
				t.Errorf("terminal output is not base64: %v", u)
			}
			b.Write(d)
		}
	}
	return b.String()
}
