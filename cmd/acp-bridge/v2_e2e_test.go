package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// v2wire is a Go ACP v2 client on the real binary's stdio: requests by id,
// session updates in order, permission requests answered by a function;
// every line both ways is checked against the v2 draft's schema when the
// workspace has it.
type v2wire struct {
	t      *testing.T
	in     io.WriteCloser
	mu     sync.Mutex
	wmu    sync.Mutex
	next   int
	waits  map[string]chan v2answer
	upds   []map[string]any
	change chan struct{}
	check  *acpschema.Checker
	perms  []map[string]any
	allow  string // the option a permission request is answered with
}

type v2answer struct {
	Result json.RawMessage     `json:"result"`
	Error  *struct{ Code int } `json:"error"`
	before int
}

func startV2(t *testing.T, schema *acpschema.Schema, env []string, args ...string) *v2wire {
	t.Helper()
	stdin, sc := startBinary(t, env, args...)
	c := &v2wire{t: t, in: stdin, waits: map[string]chan v2answer{}, change: make(chan struct{}), allow: "allow-once"}
	if schema != nil {
		c.check = acpschema.NewChecker(schema)
	}
	go func() {
		for sc.Scan() {
			c.read(append([]byte(nil), sc.Bytes()...))
		}
	}()
	return c
}

func (c *v2wire) checkLine(dir acpschema.Direction, line []byte) {
	if c.check != nil {
		if err := c.check.Check(dir, line); err != nil {
			c.t.Errorf("not valid against the v2 schema: %v\n%s", err, line)
		}
	}
}

func (c *v2wire) write(v any) {
	b, _ := json.Marshal(v)
	c.checkLine(acpschema.ToAgent, b)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.in.Write(append(b, '\n'))
}

func (c *v2wire) read(line []byte) {
	c.checkLine(acpschema.FromAgent, line)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		v2answer
	}
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Errorf("stdout line is not JSON: %s", line)
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
		go c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": c.allow}}})
	case "":
		c.mu.Lock()
		ch := c.waits[string(m.ID)]
		m.before = len(c.upds)
		c.mu.Unlock()
		if ch != nil {
			ch <- m.v2answer
		}
	default:
		if len(m.ID) > 0 {
			go c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no"}})
		}
	}
}

func (c *v2wire) call(method string, params any) v2answer {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan v2answer, 1)
	c.waits[fmt.Sprint(id)] = ch
	c.mu.Unlock()
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case a := <-ch:
		return a
	case <-time.After(60 * time.Second):
		c.t.Fatalf("%s: no answer within 60s", method)
		return v2answer{}
	}
}

func (c *v2wire) must(method string, params any) map[string]any {
	c.t.Helper()
	a := c.call(method, params)
	if a.Error != nil {
		c.t.Fatalf("%s: error %d", method, a.Error.Code)
	}
	var out map[string]any
	_ = json.Unmarshal(a.Result, &out)
	return out
}

func (c *v2wire) wait(from int, what string, ok func(map[string]any) bool) int {
	c.t.Helper()
	deadline := time.After(60 * time.Second)
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
			c.t.Fatalf("no %s within 60s", what)
		}
	}
}

func (c *v2wire) updates() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.upds...)
}

func v2State(state, stop string) func(map[string]any) bool {
	return func(u map[string]any) bool {
		return u["sessionUpdate"] == "state_update" && u["state"] == state && (stop == "" || u["stopReason"] == stop)
	}
}

// v2Kinds is the kinds of the updates, bookkeeping left out, states with
// their state and tool call updates with their status.
func v2Kinds(ups []map[string]any) []string {
	var out []string
	for _, u := range ups {
		k := fmt.Sprint(u["sessionUpdate"])
		switch k {
		case "available_commands_update", "usage_update", "session_info_update", "config_option_update":
			continue
		case "state_update":
			k += " " + fmt.Sprint(u["state"])
		case "tool_call_update":
			if s, ok := u["status"]; ok {
				k += " " + fmt.Sprint(s)
			}
		}
		if len(out) > 0 && out[len(out)-1] == k && (k == "terminal_output_chunk" || k == "agent_message_chunk") {
			continue
		}
		out = append(out, k)
	}
	return out
}

// TestBinaryV2 drives the real binary over stdio in the ACP v2 dialect
// with a Go client: a prompt whose command asks permission and shows in a
// display terminal, a cancelled prompt, list, close; then, in a new
// process on the same state directory, a resume from the replay cursor the
// first process gave. Every message is checked against the draft's schema
// (skipped without it).
func TestBinaryV2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	schema, err := acpschema.V2()
	if err != nil {
		t.Fatal(err)
	}
	if schema == nil {
		t.Log("no ACP v2 schema beside the checkout: messages are not checked against it")
	}
	cwd, state := t.TempDir(), t.TempDir()
	model := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(model, []byte(`{"responses":[
		{"parts":[{"text":"Listing."},{"tool_call":{"id":"c1","name":"bash","arguments":{"command":"printf 'one\\ntwo\\n'"}}}]},
		{"parts":[{"text":"Done."}]},
		{"parts":[{"tool_call":{"id":"c2","name":"bash","arguments":{"command":"echo started; sleep 30"}}}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"ACP_BRIDGE_STATE_DIR=" + state}
	hello := map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "go-v2", "version": "1"}, "capabilities": map[string]any{}}

	c := startV2(t, schema, env, "--model", "script:"+model)
	init := c.must("initialize", hello)
	if meta, _ := init["_meta"].(map[string]any); init["protocolVersion"] != float64(2) || meta["acpBridge/experimental"] == nil {
		t.Fatalf("initialize = %v", init)
	}
	sid, _ := c.must("session/new", map[string]any{"cwd": cwd})["sessionId"].(string)
	first := c.must("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "list it"}}})
	end := c.wait(0, "idle after the first turn", v2State("idle", "end_turn"))
	ups := c.updates()[:end]
	want := "user_message,state_update running,agent_message_chunk,terminal_update,tool_call_update pending," +
		"state_update requires_action,state_update running,tool_call_update in_progress,terminal_output_chunk," +
		"terminal_update,tool_call_update completed,agent_message_chunk,state_update idle"
	if got := strings.Join(v2Kinds(ups), ","); got != want {
		t.Errorf("first turn:\n got %s\nwant %s", got, want)
	}
	var out strings.Builder
	var cursor any
	for _, u := range ups {
		switch u["sessionUpdate"] {
		case "terminal_output_chunk":
			d, _ := base64.StdEncoding.DecodeString(fmt.Sprint(u["data"]))
			out.Write(d)
		case "terminal_update":
			if st, ok := u["exitStatus"].(map[string]any); ok && st["exitCode"] != float64(0) {
				t.Errorf("exit status %v", st)
			}
		case "state_update":
			if m, _ := u["_meta"].(map[string]any); u["state"] == "idle" {
				cursor = m["replayFrom"]
			}
		}
	}
	if out.String() != "one\ntwo\n" || cursor == nil || len(c.perms) != 1 {
		t.Fatalf("output %q, cursor %v, permission requests %v", out.String(), cursor, c.perms)
	}

	second := c.must("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "wait"}}})
	at := c.wait(end, "the command's output", func(u map[string]any) bool { return u["sessionUpdate"] == "terminal_output_chunk" })
	c.write(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	c.wait(at, "idle, cancelled", v2State("idle", "cancelled"))
	if ss, _ := c.must("session/list", map[string]any{})["sessions"].([]any); len(ss) != 1 {
		t.Errorf("session/list: %v", ss)
	}
	c.must("session/close", map[string]any{"sessionId": sid})
	c.in.Close() // the first process ends

	// A new process resumes from the cursor: the second turn, then the
	// current state, all before the answer.
	c2 := startV2(t, schema, env, "--model", "script:"+model)
	c2.must("initialize", hello)
	res := c2.call("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": cursor})
	if res.Error != nil {
		t.Fatalf("resume: %d", res.Error.Code)
	}
	var replayed []map[string]any
	for _, u := range c2.updates()[:res.before] {
		if k := u["sessionUpdate"]; k != "available_commands_update" && k != "usage_update" && k != "session_info_update" {
			replayed = append(replayed, u)
		}
	}
	if len(replayed) < 2 || replayed[0]["sessionUpdate"] != "user_message" || replayed[0]["messageId"] != second["messageId"] {
		t.Fatalf("the replay from the cursor starts with %v", replayed)
	}
	if last := replayed[len(replayed)-1]; !v2State("idle", "cancelled")(last) {
		t.Errorf("the resume's last update is %v, want the idle snapshot", last)
	}
	for _, u := range replayed {
		if u["messageId"] == first["messageId"] {
			t.Errorf("the replay from the cursor has the first turn: %v", u)
		}
	}
	if c.check != nil {
		for _, cl := range []*v2wire{c, c2} {
			if u := cl.check.Unchecked(); len(u) > 0 {
				t.Errorf("unchecked: %v", u)
			}
		}
	}
}
