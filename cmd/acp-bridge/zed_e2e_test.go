package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zedClient is an editor that answers the way Zed does, not the way a disk
// does (Zed's client code, crates/agent_servers and crates/acp_thread):
//   - fs/read_text_file of a file that does not exist answers {"content": ""}
//     (Zed opens an empty new buffer);
//   - fs/write_text_file formats the text before saving it (format on save),
//     so the file on disk differs from what was sent;
//   - locations[].line is read as a 0-based row;
//   - it identifies itself as clientInfo.name "zed" and advertises what Zed
//     advertises.
type zedClient struct {
	t       *testing.T
	profile clientProfile
	stderr  func() string    // what the bridge wrote to stderr so far
	perms   []map[string]any // session/request_permission params, in order
	// answered: the method of each response, in the order they came
	answered []string
	in       io.WriteCloser
	out      *bufio.Scanner
	nextID   int
	notes    []map[string]any // session/update params, in order
	raw      []int            // the size of every session/update line
	// format is Zed's formatter: applied to every write before it is saved.
	format func(string) string
	writes []string // the paths written through the editor
}

// rpcError is a JSON-RPC error response.
type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

func (c *zedClient) send(v any) {
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// request sends a request and reads until its response, answering the
// bridge's requests as Zed would on the way.
func (c *zedClient) request(method string, params any) (map[string]any, *rpcError) {
	c.t.Helper()
	res, errs := c.concurrent([2]any{method, params})
	return res[0], errs[0]
}

// concurrent sends the requests ({method, params} each) one after the
// other without waiting, then reads until every one is answered; the
// results and errors are in the order sent.
func (c *zedClient) concurrent(reqs ...[2]any) ([]map[string]any, []*rpcError) {
	c.t.Helper()
	index := map[float64]int{}
	for i, r := range reqs {
		c.nextID++
		index[float64(c.nextID)] = i
		c.send(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": r[0], "params": r[1]})
	}
	results, errs := make([]map[string]any, len(reqs)), make([]*rpcError, len(reqs))
	pending := len(reqs)
	for pending > 0 && c.out.Scan() {
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      any             `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
			Result  json.RawMessage `json:"result"`
			Error   *rpcError       `json:"error"`
		}
		if err := json.Unmarshal(c.out.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			c.t.Fatalf("stdout line is not JSON-RPC: %q", c.out.Text())
		}
		switch {
		case msg.Method == "session/update":
			var p map[string]any
			json.Unmarshal(msg.Params, &p)
			c.notes = append(c.notes, p)
			c.raw = append(c.raw, len(c.out.Bytes()))
		case msg.Method != "" && msg.ID != nil:
			c.serve(msg.ID, msg.Method, msg.Params)
		default:
			id, _ := msg.ID.(float64)
			i, ok := index[id]
			if !ok {
				continue
			}
			delete(index, id)
			pending--
			c.answered = append(c.answered, reqs[i][0].(string))
			if msg.Error != nil {
				errs[i] = msg.Error
				continue
			}
			json.Unmarshal(msg.Result, &results[i])
		}
	}
	if pending > 0 {
		c.t.Fatalf("the bridge closed stdout while %d requests were pending: %v", pending, c.out.Err())
	}
	return results, errs
}

func (c *zedClient) call(method string, params any) map[string]any {
	c.t.Helper()
	res, err := c.request(method, params)
	if err != nil {
		c.t.Fatalf("%s failed: %+v", method, err)
	}
	return res
}

// serve answers one request of the bridge.
func (c *zedClient) serve(id any, method string, params json.RawMessage) {
	var p struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	json.Unmarshal(params, &p)
	reply := func(result any) { c.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result}) }
	switch method {
	case "fs/read_text_file":
		b, err := os.ReadFile(p.Path)
		if err != nil && !os.IsNotExist(err) {
			c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": err.Error()}})
			return
		}
		reply(map[string]any{"content": string(b)}) // a missing file: an empty new buffer
	case "fs/write_text_file":
		c.writes = append(c.writes, p.Path)
		text := p.Content
		if c.format != nil {
			text = c.format(text)
		}
		if err := os.WriteFile(p.Path, []byte(text), 0o644); err != nil {
			c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": err.Error()}})
			return
		}
		if c.profile.writeNull {
			reply(nil) // codecompanion: "result": null
			return
		}
		reply(map[string]any{})
	case "session/request_permission":
		var pp map[string]any
		json.Unmarshal(params, &pp)
		c.perms = append(c.perms, pp)
		reply(map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}})
	default:
		c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "method not found"}})
	}
}

// updates returns the session/update objects of one kind.
func (c *zedClient) updates(kind string) []map[string]any {
	var out []map[string]any
	for _, n := range c.notes {
		if u := n["update"].(map[string]any); u["sessionUpdate"] == kind {
			out = append(out, u)
		}
	}
	return out
}

// card collects a tool call's card: the tool_call and its updates.
func (c *zedClient) card(id string) []map[string]any {
	var out []map[string]any
	for _, n := range c.notes {
		if u := n["update"].(map[string]any); u["toolCallId"] == id {
			out = append(out, u)
		}
	}
	return out
}

// clientProfile is where ACP clients differ in what they send and how
// they answer; the client is otherwise one (zedClient).
type clientProfile struct {
	name string
	caps map[string]any // clientCapabilities
	info map[string]any // clientInfo
	// writeNull: fs/write_text_file is answered with "result": null
	// (codecompanion) instead of {}.
	writeNull bool
}

var (
	// What Zed sends (crates/agent_servers/src/acp.rs).
	zedProfile = clientProfile{name: "Zed",
		caps: map[string]any{
			"fs":          map[string]any{"readTextFile": true, "writeTextFile": true},
			"terminal":    true,
			"auth":        map[string]any{"terminal": true},
			"session":     map[string]any{"configOptions": map[string]any{"boolean": map[string]any{}}},
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"_meta":       map[string]any{"terminal_output": true, "terminal-auth": true},
		},
		info: map[string]any{"name": "zed", "version": "0.300.0", "title": "Zed"}}
	// Emacs agent-shell (acp.el): files through the editor, no terminal
	// and no _meta; it shows every stderr chunk as an error, reads a
	// false capability as absent, and renders diffs as given.
	agentShellProfile = clientProfile{name: "agent-shell",
		caps: map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}},
		info: map[string]any{"name": "agent-shell", "version": "0.74.1"}}
	// codecompanion.nvim: one process per chat, writes answered with
	// result null, a stopped message re-sent as a second text block.
	codeCompanionProfile = clientProfile{name: "codecompanion",
		caps:      map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": false},
		info:      map[string]any{"name": "CodeCompanion.nvim", "version": "17.33.0"},
		writeNull: true}
	// The AI SDK provider (@mcpc-tech/acp-ai-provider): no fs, no
	// terminal; it takes rawOutput as a tool's result and calls
	// session/set_model.
	aiSDKProfile = clientProfile{name: "AI SDK provider",
		caps: map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false},
		info: map[string]any{"name": "acp-ai-provider", "version": "0.2.9"}}
)

// startZed starts the built bridge with a Zed-like client and initializes.
func startZed(t *testing.T, env []string, args ...string) (*zedClient, map[string]any) {
	t.Helper()
	return startClient(t, zedProfile, env, args...)
}

// startClient starts the built bridge with a client of the profile and
// initializes.
func startClient(t *testing.T, p clientProfile, env []string, args ...string) (*zedClient, map[string]any) {
	t.Helper()
	stdin, sc, stderr := startBinaryStderr(t, env, args...)
	c := &zedClient{t: t, in: stdin, out: sc, profile: p, stderr: stderr}
	init := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": p.caps, "clientInfo": p.info})
	return c, init
}

// zedFormat is the formatter the client applies on save: tabs become four
// spaces and trailing blanks go.
func zedFormat(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.ReplaceAll(l, "\t", "    "), " ")
	}
	return strings.Join(lines, "\n")
}

func toolCall(id, name, args string) string {
	return delta(fmt.Sprintf(`{"tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}]}`, id, name, args), "")
}

// toolResultIn finds the tool message answering callID in a request body.
func toolResultIn(body map[string]any, callID string) string {
	msgs, _ := body["messages"].([]any)
	for _, raw := range msgs {
		if m := raw.(map[string]any); m["role"] == "tool" && m["tool_call_id"] == callID {
			return fmt.Sprint(m["content"])
		}
	}
	return ""
}

// TestBinaryRightInZed drives the real binary with a client that answers
// like Zed: a missing file is not found, the second edit after a
// reformatting write succeeds, a read card's line is the 0-based row of the
// line read, additionalDirectories is advertised, bypass is not in the mode
// picker, and terminal updates stay under 16 KiB.
func TestBinaryRightInZed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("one\ntwo\nthree\nfour\nfive\n"), 0o644)
	mainGo := filepath.Join(work, "main.go")

	m := &oaiMock{t: t}
	step := func(payloads ...string) func(http.ResponseWriter, map[string]any) {
		return func(w http.ResponseWriter, _ map[string]any) {
			sseWrite(w, 1<<20, append(payloads, delta(`{}`, "tool_calls"))...)
		}
	}
	m.steps = []func(http.ResponseWriter, map[string]any){
		step(toolCall("c_missing", "read", `{"file_path":"missing.txt"}`)),
		step(toolCall("c_read", "read", `{"file_path":"notes.txt","offset":3,"limit":2}`)),
		step(toolCall("c_write", "write", `{"file_path":"main.go","content":"package main\n\nfunc main() {\n\tprintln(1)   \n}\n"}`)),
		// Written against the text as saved (spaces): not stale. It adds
		// a tab, which the editor reformats again...
		step(toolCall("c_edit", "edit", `{"file_path":"main.go","old_string":"    println(1)","new_string":"    println(1)\n\tprintln(2)"}`)),
		// ...and the second edit, against that saved text, succeeds too.
		step(toolCall("c_edit2", "edit", `{"file_path":"main.go","old_string":"    println(2)","new_string":"    println(3)"}`)),
		// Output in bursts larger than one update, far enough apart that
		// each gets its own.
		step(toolCall("c_bash", "bash", `{"command":"for i in 1 2 3; do head -c 40000 /dev/zero | tr '\\0' x; sleep 0.2; done","description":"Print a lot"}`)),
		func(w http.ResponseWriter, _ map[string]any) {
			sseWrite(w, 64, delta(`{"content":"Done."}`, "stop"))
		},
	}
	srv := httptest.NewServer(m)
	defer srv.Close()

	c, init := startZed(t, mockEnv, mockArgs(srv)...)
	c.format = zedFormat
	caps := init["agentCapabilities"].(map[string]any)
	if sc, _ := caps["sessionCapabilities"].(map[string]any); sc["additionalDirectories"] == nil {
		t.Errorf("sessionCapabilities = %v: additionalDirectories not advertised", caps["sessionCapabilities"])
	}

	sess := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	sid := sess["sessionId"]
	for _, o := range sess["configOptions"].([]any) {
		opt := o.(map[string]any)
		if opt["id"] != "mode" {
			continue
		}
		for _, v := range opt["options"].([]any) {
			if v.(map[string]any)["value"] == "bypass" {
				t.Errorf("bypass is in the mode picker without the opt-in: %v", opt["options"])
			}
		}
	}
	if modes, _ := sess["modes"].(map[string]any); modes != nil {
		for _, v := range modes["availableModes"].([]any) {
			if v.(map[string]any)["id"] == "bypass" {
				t.Errorf("bypass is among the legacy modes without the opt-in")
			}
		}
	}

	res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	if res["stopReason"] != "end_turn" {
		t.Fatalf("stopReason = %v", res["stopReason"])
	}
	if len(m.reqs) != len(m.steps) {
		t.Fatalf("the endpoint saw %d requests, want %d", len(m.reqs), len(m.steps))
	}

	// The missing file: not found, for the model and on the card.
	if got := toolResultIn(m.reqs[1], "c_missing"); !strings.Contains(got, "file not found") {
		t.Errorf("read of a missing file gave the model %q", got)
	}
	if last := c.card("c_missing"); len(last) == 0 || last[len(last)-1]["status"] != "failed" {
		t.Errorf("missing-file card: %v", last)
	}

	// The read card points at the line read, as Zed counts rows (0-based).
	if cards := c.card("c_read"); len(cards) == 0 || !hasLocationLine(cards[0], filepath.Join(work, "notes.txt"), 2) {
		t.Errorf("read card (offset 3): %v, want line 2 (0-based row of line 3)", cards)
	}

	// The write was reformatted by the editor; the model was told, and the
	// next edit, written against the saved text, succeeded.
	if got := toolResultIn(m.reqs[3], "c_write"); !strings.Contains(got, "the editor changed the file") {
		t.Errorf("the model was not told about the reformat: %q", got)
	}
	for i, id := range []string{"c_edit", "c_edit2"} {
		if got := toolResultIn(m.reqs[4+i], id); !strings.Contains(got, "updated successfully") {
			t.Errorf("edit %d after a reformatting write: %q", i+1, got)
		}
	}
	if got := toolResultIn(m.reqs[4], "c_edit"); !strings.Contains(got, "the editor changed the file") {
		t.Errorf("the model was not told about the edit's reformat: %q", got)
	}
	if b, _ := os.ReadFile(mainGo); string(b) != "package main\n\nfunc main() {\n    println(1)\n    println(3)\n}\n" {
		t.Errorf("main.go = %q", b)
	}
	// The second edit changed line 5 (row 4), and its card says so.
	edit := c.card("c_edit2")
	if len(edit) == 0 || !hasLocationLine(edit[len(edit)-1], mainGo, 4) {
		t.Errorf("edit's final update: %v, want the first changed line (row 4)", edit)
	}

	// Terminal output: updates of at most 16 KiB of data, each line well
	// under what Zed keeps per message.
	var got int
	for _, u := range c.card("c_bash") {
		meta, _ := u["_meta"].(map[string]any)
		if o, ok := meta["terminal_output"].(map[string]any); ok {
			data := o["data"].(string)
			if len(data) > 16<<10 {
				t.Errorf("a terminal_output update of %d bytes", len(data))
			}
			got += len(data)
		}
	}
	// Output faster than the editor should take is dropped (and counted)
	// by the coalescer, so not all 200 kB arrive; more than one chunk must.
	if got <= 16<<10 {
		t.Errorf("terminal output of %d bytes reached the client, want more than one chunk", got)
	}
	for _, n := range c.raw {
		if n > 20<<10 {
			t.Errorf("a session/update line of %d bytes", n)
		}
	}
}

func hasLocationLine(u map[string]any, path string, line int) bool {
	locs, _ := u["locations"].([]any)
	for _, l := range locs {
		loc := l.(map[string]any)
		if loc["path"] == path && loc["line"] == float64(line) {
			return true
		}
	}
	return false
}

// TestBinaryMissingKeyIsAnError: without the key, session/prompt fails
// with JSON-RPC -32000 (auth required), naming what a Zed user changes.
func TestBinaryMissingKeyIsAnError(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	c, _ := startZed(t, nil)
	sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
	_, err := c.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if err == nil {
		t.Fatal("session/prompt succeeded without a key")
	}
	if err.Code != -32000 {
		t.Errorf("error code %d, want -32000 (auth required)", err.Code)
	}
	for _, w := range []string{"DEEPSEEK_API_KEY", "agent_servers", "acp-bridge login"} {
		if !strings.Contains(err.Message, w) {
			t.Errorf("error message lacks %q: %s", w, err.Message)
		}
	}
	var text strings.Builder
	for _, u := range c.updates("agent_message_chunk") {
		text.WriteString(fmt.Sprint(u["content"].(map[string]any)["text"]))
	}
	if s := withoutOffNote(text.String()); s != "" {
		t.Errorf("the failure was also sent as text: %q", s)
	}
}
