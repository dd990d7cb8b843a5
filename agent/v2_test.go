package agent

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

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/bash"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// v2client is an in-memory ACP v2 client on raw lines: every message both
// ways is checked against the v2 draft's schema when the workspace has it.
type v2client struct {
	t      *testing.T
	in     io.WriteCloser
	mu     sync.Mutex
	wmu    sync.Mutex
	next   int
	waits  map[string]chan v2msg
	upds   []map[string]any // params.update of each session/update, in order
	change chan struct{}    // closed (and replaced) when upds grows
	check  *acpschema.Checker
	// permission picks the option id for a permission request ("" cancels).
	permission func(req map[string]any) string
	perms      []map[string]any
}

type v2msg struct {
	Result json.RawMessage `json:"result"`
	Error  *acp.Error      `json:"error"`
	before int             // updates received before the response
}

// v2Schema is the draft's schema, or nil (the schema checks are skipped).
func v2Schema(t *testing.T) *acpschema.Schema {
	t.Helper()
	s, err := acpschema.V2()
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		t.Log("no ACP v2 schema beside the checkout: messages are not checked against it")
	}
	return s
}

func newV2Client(t *testing.T, schema *acpschema.Schema, newAgent func(acp.Client) acp.Agent) *v2client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := acp.NewConn(t.Context(), newAgent, inR, outW, inR, nil)
	c := &v2client{t: t, in: inW, waits: map[string]chan v2msg{}, change: make(chan struct{})}
	if schema != nil {
		c.check = acpschema.NewChecker(schema)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			c.read(append([]byte(nil), sc.Bytes()...))
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		conn.Close()
		conn.Wait()
		outW.Close()
		<-done
	})
	return c
}

func (c *v2client) checkLine(dir acpschema.Direction, line []byte) {
	if c.check == nil {
		return
	}
	if err := c.check.Check(dir, line); err != nil {
		c.t.Errorf("not valid against the v2 schema: %v\n%s", err, line)
	}
}

func (c *v2client) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Error(err)
		return
	}
	if m, _ := v.(map[string]any); m["method"] != "session/load" { // sent on purpose: not v2
		c.checkLine(acpschema.ToAgent, b)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Errorf("write: %v", err)
	}
}

func (c *v2client) read(line []byte) {
	c.checkLine(acpschema.FromAgent, line)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		v2msg
	}
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Errorf("bad line %s: %v", line, err)
		return
	}
	switch {
	case m.Method == acp.MethodSessionUpdate:
		var p struct {
			Update map[string]any `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		c.upds = append(c.upds, p.Update)
		close(c.change)
		c.change = make(chan struct{})
		c.mu.Unlock()
	case m.Method == acp.MethodSessionRequestPermission:
		var p map[string]any
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		c.perms = append(c.perms, p)
		c.mu.Unlock()
		outcome := map[string]any{"outcome": "cancelled"}
		if id := c.permission(p); id != "" {
			outcome = map[string]any{"outcome": "selected", "optionId": id}
		}
		go c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": outcome}})
	case m.Method != "":
		if len(m.ID) > 0 {
			go c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no"}})
		}
	default:
		c.mu.Lock()
		ch := c.waits[string(m.ID)]
		m.before = len(c.upds)
		c.mu.Unlock()
		if ch != nil {
			ch <- m.v2msg
		}
	}
}

// call sends a request and waits for its answer.
func (c *v2client) call(method string, params any) (json.RawMessage, *acp.Error) {
	c.t.Helper()
	m := c.callMsg(method, params)
	return m.Result, m.Error
}

func (c *v2client) callMsg(method string, params any) v2msg {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan v2msg, 1)
	c.waits[fmt.Sprint(id)] = ch
	c.mu.Unlock()
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%s: no answer within 30s", method)
		return v2msg{}
	}
}

func (c *v2client) must(method string, params any) map[string]any {
	c.t.Helper()
	raw, err := c.call(method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

func (c *v2client) notify(method string, params any) {
	c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// waitUpdate waits until an update from index from on satisfies ok, and
// returns the index after it.
func (c *v2client) waitUpdate(from int, what string, ok func(map[string]any) bool) int {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
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
			c.t.Fatalf("no %s within 30s", what)
		}
	}
}

func (c *v2client) updates() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.upds...)
}

// convo leaves out the session bookkeeping (commands, title, usage,
// options), which may come between a turn's updates.
func convo(ups []map[string]any) []map[string]any {
	var out []map[string]any
	for _, u := range ups {
		switch u["sessionUpdate"] {
		case "available_commands_update", "usage_update", "session_info_update", "config_option_update":
			continue
		}
		out = append(out, u)
	}
	return out
}

func isState(state, stop string) func(map[string]any) bool {
	return func(u map[string]any) bool {
		return u["sessionUpdate"] == "state_update" && u["state"] == state && (stop == "" || u["stopReason"] == stop)
	}
}

// shape summarises a turn's updates: their kinds (states with the state,
// tool call updates with their status), leaving out bookkeeping, and runs
// of output chunks as one (live output is coalesced by time).
func shape(ups []map[string]any) []string {
	var out []string
	for _, u := range ups {
		k, _ := u["sessionUpdate"].(string)
		switch k {
		case "available_commands_update", "usage_update", "session_info_update", "config_option_update":
			continue
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

// TestV2SessionInMemory drives the agent over a real acp.Conn in the v2
// dialect: initialize, new, a prompt whose command asks permission and runs
// in a display terminal, a cancelled prompt, list, close, then a resume in a
// new agent on the same store from a cursor and from the start.
func TestV2SessionInMemory(t *testing.T) {
	schema := v2Schema(t)
	cwd := t.TempDir()
	st, err := session.OpenStore(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	fs.Register(reg)
	bash.Register(reg)
	provider := script(t, `{"responses":[
		{"parts":[{"text":"Listing."},{"tool_call":{"id":"c1","name":"bash","arguments":{"command":"printf 'one\\ntwo\\n'"}}}]},
		{"parts":[{"text":"Done."}]},
		{"parts":[{"tool_call":{"id":"c2","name":"bash","arguments":{"command":"echo started; sleep 30"}}}]}]}`)
	newAgent := func(p model.Provider) func(acp.Client) acp.Agent {
		return func(c acp.Client) acp.Agent { return New(c, Options{Registry: reg, Model: p, Store: st}) }
	}
	c := newV2Client(t, schema, newAgent(provider))
	c.permission = func(map[string]any) string { return "allow-once" }

	init := c.must("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "test", "version": "1"}, "capabilities": map[string]any{}})
	caps, _ := init["capabilities"].(map[string]any)
	meta, _ := init["_meta"].(map[string]any)
	if init["protocolVersion"] != float64(2) || caps["session"] == nil || meta[acp.MetaExperimental] == nil {
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
	if _, err := c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "type": "weird", "value": "ask"}); err == nil || err.Code != acp.CodeInvalidParams {
		t.Errorf("an unknown value type: %v", err)
	}
	if _, err := c.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); err == nil || err.Code != acp.CodeMethodNotFound {
		t.Errorf("session/load on v2: %v", err)
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
			if _, exit := u["exitStatus"]; !exit && (u["terminalId"] != "c1" || u["command"] != "printf 'one\\ntwo\\n'" || u["cwd"] != cwd) {
				t.Errorf("terminal_update %v", u)
			}
		case "agent_message_chunk":
			if u["messageId"] == nil {
				t.Errorf("agent message without an id: %v", u)
			}
		case "state_update":
			if m, _ := u["_meta"].(map[string]any); u["state"] == "idle" {
				cursor = m[acp.MetaReplayFrom]
			}
		}
	}
	if cursor == nil {
		t.Fatal("no replay cursor on the idle state")
	}
	if len(c.perms) != 1 {
		t.Fatalf("permission requests: %v", c.perms)
	}
	perm := c.perms[0]
	if subj, _ := perm["subject"].(map[string]any); subj["type"] != "tool_call" || perm["title"] == "" {
		t.Errorf("permission request %v", perm)
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

	// A new agent (a new process, as far as sessions go) resumes from the
	// cursor: the second turn is replayed, then the current state.
	c2 := newV2Client(t, schema, newAgent(script(t, `{"responses":[]}`)))
	c2.must("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "test", "version": "1"}})
	if _, err := c2.call("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": map[string]any{"type": "bogus"}}); err == nil || err.Code != acp.CodeInvalidParams {
		t.Errorf("an unknown cursor: %v", err)
	}
	res := c2.callMsg("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": cursor})
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	replayed := convo(c2.updates()[:res.before]) // all of it before the response
	if len(replayed) < 2 || replayed[0]["sessionUpdate"] != "user_message" || replayed[0]["messageId"] != pr2["messageId"] {
		t.Fatalf("replay from the cursor starts with %v", replayed[:min(len(replayed), 1)])
	}
	if last := replayed[len(replayed)-1]; last["sessionUpdate"] != "state_update" || last["state"] != "idle" || last["stopReason"] != "cancelled" {
		t.Errorf("the resume's last update is %v, want the idle snapshot", last)
	}
	for _, u := range replayed {
		if u["sessionUpdate"] == "user_message" && u["messageId"] == msgID {
			t.Errorf("the replay from the cursor repeated the first turn")
		}
	}
	// From the start: the first turn too, with the id it was answered with.
	n := len(c2.updates())
	res = c2.callMsg("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": map[string]any{"type": "start"}})
	if res.Error != nil || res.before < n {
		t.Fatal(res.Error)
	}
	again := convo(c2.updates()[n:res.before])
	if again[0]["sessionUpdate"] != "user_message" || again[0]["messageId"] != msgID {
		t.Errorf("replay from the start begins with %v", again[0])
	}
	if got, want := shape(again), append(append([]string{}, want...), shape(second)...); strings.Join(got[:len(want)], ",") != strings.Join(want, ",") {
		t.Errorf("replayed first turn:\n got %v\nwant %v", got[:len(want)], want)
	}
	if c.check != nil {
		for _, cl := range []*v2client{c, c2} {
			if u := cl.check.Unchecked(); len(u) > 0 {
				t.Errorf("unchecked: %v", u)
			}
		}
	}
}
