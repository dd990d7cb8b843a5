package suite

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// finding is one offence against a check, with the message that shows it.
type finding struct {
	check string
	entry *Entry
	why   string
}

// tally collects, per check, how many messages were examined and what failed.
type tally struct {
	examined map[string]int
	findings []finding
}

func newTally() *tally { return &tally{examined: map[string]int{}} }

func (t *tally) saw(check string) { t.examined[check]++ }
func (t *tally) fail(check string, e *Entry, why string, args ...any) {
	t.findings = append(t.findings, finding{check: check, entry: e, why: fmt.Sprintf(why, args...)})
}

// Check ids of the checks made over whole traces.
const (
	CheckStdout        = "jsonrpc.stdout"
	CheckResponses     = "jsonrpc.responses"
	CheckSchemaAgent   = "schema.agent"
	CheckSchemaClient  = "schema.client"
	CheckCapabilities  = "client.capabilities"
	CheckTermGated     = "client.terminal-output-gated"
	CheckNoticeGated   = "client.notices-gated"
	CheckToolName      = "toolcall.name"
	CheckUpdateSession = "session.update-session-id"
	CheckKnownID       = "toolcall.known-id"
	CheckStatusForward = "toolcall.status-forward"
	CheckPermTitle     = "toolcall.permission-title"
	CheckTermSequence  = "toolcall.terminal-sequence"
	CheckPathsAbsolute = "toolcall.paths-absolute"
)

// analyze runs every trace-wide check over one run's entries. caps is what
// the client advertised in that run.
func analyze(t *tally, schema *acpschema.Schema, caps Caps, entries []*Entry) {
	checkWire(t, schema, entries)
	checkCaps(t, caps, entries)
	checkToolCalls(t, caps, entries)
}

// checkWire: every stdout line is JSON-RPC; every message matches the schema;
// every client request is answered exactly once, and nothing else is.
func checkWire(t *tally, schema *acpschema.Schema, entries []*Entry) {
	var ck *acpschema.Checker
	if schema != nil {
		ck = acpschema.NewChecker(schema)
	}
	open := map[string]*Entry{} // client request ids awaiting an answer
	garbled := 0                // client lines that were not JSON-RPC: each may get an id-less error
	for _, e := range entries {
		if e.Dir == acpschema.ToAgent && e.Msg == nil {
			garbled++
		}
		if e.Dir == acpschema.FromAgent {
			t.saw(CheckStdout)
			if e.Msg == nil {
				t.fail(CheckStdout, e, "stdout line is not a JSON-RPC 2.0 message")
				continue
			}
		}
		if e.Msg == nil {
			continue
		}
		m := e.Msg
		// A response to nothing is jsonrpc.responses' to report, not the schema's.
		unmatched := e.Dir == acpschema.FromAgent && m.IsResponse() && hasID(m.ID) && open[idKey(m.ID)] == nil
		if ck != nil {
			err := ck.Check(e.Dir, []byte(e.Line))
			switch {
			case e.Dir == acpschema.FromAgent && unmatched:
			case e.Dir == acpschema.FromAgent:
				t.saw(CheckSchemaAgent)
				if err != nil {
					t.fail(CheckSchemaAgent, e, "%v", err)
				}
			case !e.Deliberate:
				t.saw(CheckSchemaClient)
				if err != nil {
					t.fail(CheckSchemaClient, e, "%v", err)
				}
			}
		}
		switch {
		case e.Dir == acpschema.ToAgent && m.IsRequest():
			t.saw(CheckResponses)
			open[idKey(m.ID)] = e
		case e.Dir == acpschema.FromAgent && m.IsResponse():
			if !hasID(m.ID) {
				if m.Error != nil && (m.Error.Code == -32700 || m.Error.Code == CodeInvalidRequest) && garbled > 0 {
					garbled-- // JSON-RPC answers an unreadable message with id null
					continue
				}
				t.fail(CheckResponses, e, "a response without an id: agents answer requests only, never notifications")
				continue
			}
			if open[idKey(m.ID)] == nil {
				t.fail(CheckResponses, e, "a response to id %s, which the client never sent or which was already answered", m.ID)
				continue
			}
			delete(open, idKey(m.ID))
		}
	}
	for _, e := range entries {
		if e.Msg != nil && e.Dir == acpschema.ToAgent && e.Msg.IsRequest() && open[idKey(e.Msg.ID)] == e {
			t.fail(CheckResponses, e, "the agent never answered this request")
		}
	}
}

// metaKeys are Zed's display-terminal keys (PROTOCOL.md §12).
var metaKeys = []string{"terminal_info", "terminal_output", "terminal_exit"}

// checkCaps: the agent calls only what the client advertised, and uses the
// terminal _meta convention only when the client opted in.
func checkCaps(t *tally, caps Caps, entries []*Entry) {
	for _, e := range entries {
		if e.Dir != acpschema.FromAgent || e.Msg == nil || e.Msg.Method == "" {
			continue
		}
		t.saw(CheckCapabilities)
		if !caps.allows(e.Msg.Method) {
			t.fail(CheckCapabilities, e, "the agent called %s, which this client did not advertise (clientCapabilities %s)", e.Msg.Method, capsSummary(caps))
		}
		u, ok := sessionUpdate(e)
		if !ok {
			continue
		}
		if u.kind == "tool_call" || u.kind == "tool_call_update" {
			t.saw(CheckTermGated)
			meta := objField(u.fields["_meta"])
			for _, k := range metaKeys {
				if _, ok := meta[k]; ok && !caps.TerminalOutput {
					t.fail(CheckTermGated, e, "_meta.%s sent to a client that did not advertise _meta.terminal_output", k)
				}
			}
			if _, ok := meta["terminal_output_delta"]; ok && !caps.TerminalOutputDelta {
				t.fail(CheckTermGated, e, "_meta.terminal_output_delta sent to a client that did not advertise _meta.terminal_output_delta")
			}
		}
		t.saw(CheckNoticeGated)
		switch {
		case u.kind == "notice" && !caps.Notices:
			t.fail(CheckNoticeGated, e, "a notice sent to a client that did not advertise session.notices (send agent text instead)")
		case (u.kind == "compaction_update" || u.kind == "compaction_summary_chunk") && !caps.Compaction:
			t.fail(CheckNoticeGated, e, "%s sent to a client that did not advertise session.compaction", u.kind)
		}
	}
}

func capsSummary(c Caps) string {
	b, _ := json.Marshal(c.JSON())
	return string(b)
}

func objField(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

// card is what the client knows of one tool call.
type card struct {
	name      string // the tool's programmatic name, when the agent sent one
	rank      int    // 0 pending, 1 in_progress, 2 completed or failed
	status    string // last status
	terminals map[string]*termState
}

type termState struct{ exited bool }

func statusRank(s string) int {
	switch s {
	case "in_progress":
		return 1
	case "completed", "failed":
		return 2
	}
	return 0
}

// checkToolCalls follows every tool call of every session: updates only for
// known ids, statuses only forward, the terminal sequence
// info → output → exit on one id, and absolute paths everywhere.
func checkToolCalls(t *tally, caps Caps, entries []*Entry) {
	sessions := map[string]bool{}
	cards := map[string]map[string]*card{} // session → tool call id → card
	created := map[string]bool{}           // terminal ids the client handed out via terminal/create
	createReq := map[string]bool{}         // agent request ids of terminal/create
	for _, e := range entries {
		m := e.Msg
		if m == nil {
			continue
		}
		// Learn sessions and client-created terminals from the client's side.
		if e.Dir == acpschema.ToAgent {
			if m.Method == "session/load" || m.Method == "session/resume" {
				sid := str(params(m)["sessionId"])
				sessions[sid] = true
				if m.Method == "session/load" {
					// The client rebuilds the thread from the replay: every
					// card starts again from its first tool_call.
					cards[sid] = map[string]*card{}
				}
			}
			if m.IsResponse() && createReq[idKey(m.ID)] {
				var r struct {
					TerminalID string `json:"terminalId"`
				}
				if json.Unmarshal(m.Result, &r) == nil && r.TerminalID != "" {
					created[r.TerminalID] = true
				}
			}
			continue
		}
		if m.IsResponse() {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(m.Result, &r) == nil && r.SessionID != "" {
				sessions[r.SessionID] = true
			}
			continue
		}
		p := params(m)
		switch m.Method {
		case "terminal/create":
			createReq[idKey(m.ID)] = true
			checkAbs(t, e, "terminal/create cwd", str(p["cwd"]), true)
		case "fs/read_text_file", "fs/write_text_file":
			checkAbs(t, e, m.Method+" path", str(p["path"]), false)
		case "session/request_permission":
			sid := str(p["sessionId"])
			tc := objField(p["toolCall"])
			id := str(tc["toolCallId"])
			t.saw(CheckPermTitle)
			if cards[sid] == nil {
				cards[sid] = map[string]*card{}
			}
			if cards[sid][id] == nil {
				if str(tc["title"]) == "" {
					t.fail(CheckPermTitle, e, "permission request for tool call %q, which the client has not seen, without a title: Zed fails it with \"title is required for a tool call\"", id)
				}
				cards[sid][id] = &card{terminals: map[string]*termState{}}
			}
			checkContentPaths(t, e, tc)
		case "session/update":
			u, ok := sessionUpdate(e)
			if !ok {
				continue
			}
			t.saw(CheckUpdateSession)
			if !sessions[u.SessionID] {
				t.fail(CheckUpdateSession, e, "session/update for session %q, which the agent never created and the client never loaded", u.SessionID)
			}
			if u.kind != "tool_call" && u.kind != "tool_call_update" {
				continue
			}
			if cards[u.SessionID] == nil {
				cards[u.SessionID] = map[string]*card{}
			}
			toolCallUpdate(t, e, u, cards[u.SessionID], created, caps)
		}
	}
}

func toolCallUpdate(t *tally, e *Entry, u *update, cards map[string]*card, created map[string]bool, caps Caps) {
	id := u.str("toolCallId")
	c := cards[id]
	status, hasStatus := u.str("status"), u.fields["status"] != nil && string(u.fields["status"]) != "null"
	name := u.str("name")
	if u.kind == "tool_call" {
		t.saw(CheckToolName)
		if name == "" {
			t.fail(CheckToolName, e, "tool_call %q without a name: send the tool's programmatic name (bash, mcp__server__tool) apart from the title", id)
		}
		if !hasStatus {
			status = "pending" // the default: a re-sent tool_call without status resets the card
		}
		hasStatus = true
		if c == nil {
			c = &card{terminals: map[string]*termState{}, name: name}
			cards[id] = c
			c.status = status
			c.rank = statusRank(status)
			hasStatus = false
		}
	} else {
		t.saw(CheckKnownID)
		if c == nil {
			t.fail(CheckKnownID, e, "tool_call_update for %q, which no tool_call announced: Zed shows a failed \"Tool call not found\" entry", id)
			c = &card{terminals: map[string]*termState{}}
			cards[id] = c
		}
	}
	if name != "" && c.name != "" && name != c.name {
		t.fail(CheckToolName, e, "tool call %q was %q and is now named %q: one call runs one tool", id, c.name, name)
	}
	if hasStatus {
		t.saw(CheckStatusForward)
		r := statusRank(status)
		switch {
		case r < c.rank:
			t.fail(CheckStatusForward, e, "tool call %q moves back from %s to %s", id, c.status, status)
		case r == 2 && c.rank == 2 && status != c.status:
			t.fail(CheckStatusForward, e, "tool call %q, already %s, becomes %s", id, c.status, status)
		}
		if r >= c.rank {
			c.rank, c.status = r, status
		}
	}
	checkContentPaths(t, e, u.fields)

	meta := objField(u.fields["_meta"])
	if !caps.TerminalOutput {
		meta = nil // reported by client.terminal-output-gated; nothing to follow
	}
	if raw, ok := meta["terminal_info"]; ok {
		t.saw(CheckTermSequence)
		var ti struct {
			TerminalID string `json:"terminal_id"`
			Cwd        string `json:"cwd"`
		}
		_ = json.Unmarshal(raw, &ti)
		switch {
		case u.kind != "tool_call":
			t.fail(CheckTermSequence, e, "terminal_info on a tool_call_update: Zed reads it only on tool_call, so no terminal is created")
		case ti.TerminalID == "":
			t.fail(CheckTermSequence, e, "terminal_info without terminal_id")
		case c.terminals[ti.TerminalID] != nil:
			t.fail(CheckTermSequence, e, "terminal_info for %q sent again: Zed replaces the terminal with an empty one", ti.TerminalID)
		default:
			c.terminals[ti.TerminalID] = &termState{}
		}
		checkAbs(t, e, "terminal_info cwd", ti.Cwd, true)
	}
	// Terminal content must name a terminal the client knows.
	var content []struct {
		Type       string `json:"type"`
		TerminalID string `json:"terminalId"`
	}
	_ = json.Unmarshal(u.fields["content"], &content)
	for _, item := range content {
		if item.Type != "terminal" {
			continue
		}
		t.saw(CheckTermSequence)
		if !created[item.TerminalID] && c.terminals[item.TerminalID] == nil {
			t.fail(CheckTermSequence, e, "terminal content names %q, which neither terminal/create nor terminal_info declared: Zed rejects the whole update", item.TerminalID)
		}
	}
	for _, k := range []string{"terminal_output", "terminal_exit"} {
		raw, ok := meta[k]
		if !ok {
			continue
		}
		t.saw(CheckTermSequence)
		var te struct {
			TerminalID string           `json:"terminal_id"`
			Data       *json.RawMessage `json:"data"`
			ExitCode   *json.RawMessage `json:"exit_code"`
		}
		_ = json.Unmarshal(raw, &te)
		ts := c.terminals[te.TerminalID]
		switch {
		case u.kind != "tool_call_update":
			t.fail(CheckTermSequence, e, "%s on a tool_call: Zed reads it only on tool_call_update", k)
		case ts == nil:
			t.fail(CheckTermSequence, e, "%s for terminal %q, which no terminal_info of tool call %q declared", k, te.TerminalID, id)
		case ts.exited:
			t.fail(CheckTermSequence, e, "%s for terminal %q after its terminal_exit", k, te.TerminalID)
		case k == "terminal_output":
			var s string
			if te.Data == nil || json.Unmarshal(*te.Data, &s) != nil {
				t.fail(CheckTermSequence, e, "terminal_output.data must be a string")
			}
		default:
			ts.exited = true
			if te.ExitCode != nil && string(*te.ExitCode) != "null" {
				var n uint64
				if json.Unmarshal(*te.ExitCode, &n) != nil {
					t.fail(CheckTermSequence, e, "terminal_exit.exit_code %s is not a non-negative integer or null: Zed drops it", *te.ExitCode)
				}
			}
		}
	}
}

// checkContentPaths checks the diff paths and locations of a tool call.
func checkContentPaths(t *tally, e *Entry, fields map[string]json.RawMessage) {
	var content []struct {
		Type string `json:"type"`
		Path string `json:"path"`
	}
	_ = json.Unmarshal(fields["content"], &content)
	for _, c := range content {
		if c.Type == "diff" {
			checkAbs(t, e, "diff path", c.Path, false)
		}
	}
	var locs []struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(fields["locations"], &locs)
	for _, l := range locs {
		checkAbs(t, e, "location path", l.Path, false)
	}
}

func checkAbs(t *tally, e *Entry, what, path string, optional bool) {
	if path == "" && optional {
		return
	}
	t.saw(CheckPathsAbsolute)
	if !filepath.IsAbs(path) {
		t.fail(CheckPathsAbsolute, e, "%s %q is not absolute", what, path)
	}
}
