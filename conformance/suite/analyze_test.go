package suite

import (
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// trace builds entries from lines: "> " is the client, "< " the agent.
func trace(lines ...string) []*Entry {
	t := newTrace()
	for _, l := range lines {
		dir := acpschema.FromAgent
		if strings.HasPrefix(l, "> ") {
			dir = acpschema.ToAgent
		}
		t.add(dir, []byte(l[2:]), false)
	}
	return t.Entries()
}

func upd(u string) string {
	return `< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":` + u + `}}`
}

const newS = `< {"jsonrpc":"2.0","id":1,"result":{"sessionId":"S"}}`

func TestToolCallChecks(t *testing.T) {
	call := `{"sessionUpdate":"tool_call","toolCallId":"a","title":"ls","name":"t","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"a"}],"_meta":{"terminal_info":{"terminal_id":"a","cwd":"/w"}}}`
	out := `{"sessionUpdate":"tool_call_update","toolCallId":"a","_meta":{"terminal_output":{"terminal_id":"a","data":"x"}}}`
	exit := `{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"completed","_meta":{"terminal_exit":{"terminal_id":"a","exit_code":0,"signal":null}}}`
	cases := []struct {
		name  string
		lines []string
		want  map[string]string // check → substring of the reason; empty: no findings
	}{
		{"the canonical terminal sequence", []string{newS, upd(call), upd(out), upd(exit)}, nil},
		{"completed then failed", []string{newS, upd(call), upd(exit),
			upd(`{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"failed"}`)},
			map[string]string{CheckStatusForward: "already completed, becomes failed"}},
		{"re-sent tool_call without status resets to pending", []string{newS, upd(call),
			upd(`{"sessionUpdate":"tool_call","toolCallId":"a","title":"ls","name":"t"}`)},
			map[string]string{CheckStatusForward: "back from in_progress to pending"}},
		{"terminal_info on an update", []string{newS,
			upd(`{"sessionUpdate":"tool_call","toolCallId":"b","title":"ls","name":"t"}`),
			upd(`{"sessionUpdate":"tool_call_update","toolCallId":"b","_meta":{"terminal_info":{"terminal_id":"b"}}}`)},
			map[string]string{CheckTermSequence: "only on tool_call"}},
		{"output for another card's terminal", []string{newS, upd(call),
			upd(`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","name":"t"}`),
			upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c","_meta":{"terminal_output":{"terminal_id":"a","data":"x"}}}`)},
			map[string]string{CheckTermSequence: "no terminal_info of tool call \"c\""}},
		{"negative exit code", []string{newS, upd(call),
			upd(`{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"failed","_meta":{"terminal_exit":{"terminal_id":"a","exit_code":-1,"signal":null}}}`)},
			map[string]string{CheckTermSequence: "not a non-negative integer"}},
		{"terminal created by the client", []string{newS,
			`< {"jsonrpc":"2.0","id":7,"method":"terminal/create","params":{"sessionId":"S","command":"ls","cwd":"rel"}}`,
			`> {"jsonrpc":"2.0","id":7,"result":{"terminalId":"term-1"}}`,
			upd(`{"sessionUpdate":"tool_call","toolCallId":"d","title":"ls","name":"t","content":[{"type":"terminal","terminalId":"term-1"}]}`)},
			map[string]string{CheckPathsAbsolute: `terminal/create cwd "rel"`}},
		{"update for an unknown session", []string{upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`)},
			map[string]string{CheckUpdateSession: `session "S"`}},
		{"load replays from scratch", []string{newS, upd(call), upd(exit),
			`> {"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"S","cwd":"/w","mcpServers":[]}}`,
			upd(call), upd(out), upd(exit)}, nil},
		{"a tool call without a name", []string{newS,
			upd(`{"sessionUpdate":"tool_call","toolCallId":"f","title":"ls"}`)},
			map[string]string{CheckToolName: `tool_call "f" without a name`}},
		{"a tool call renamed", []string{newS,
			upd(`{"sessionUpdate":"tool_call","toolCallId":"g","title":"ls","name":"bash"}`),
			upd(`{"sessionUpdate":"tool_call_update","toolCallId":"g","name":"read","status":"completed"}`)},
			map[string]string{CheckToolName: `was "bash" and is now named "read"`}},
		{"relative location", []string{newS,
			upd(`{"sessionUpdate":"tool_call","toolCallId":"e","title":"read","name":"t","locations":[{"path":"src/a.go"}]}`)},
			map[string]string{CheckPathsAbsolute: `location path "src/a.go"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ta := newTally()
			checkToolCalls(ta, ZedCaps, trace(tc.lines...))
			got := map[string][]string{}
			for _, f := range ta.findings {
				got[f.check] = append(got[f.check], f.why)
			}
			for check, sub := range tc.want {
				if !strings.Contains(strings.Join(got[check], "\n"), sub) {
					t.Errorf("%s: findings %q, want one containing %q", check, got[check], sub)
				}
			}
			for check, whys := range got {
				if _, ok := tc.want[check]; !ok {
					t.Errorf("unexpected %s findings: %q", check, whys)
				}
			}
		})
	}
}

func TestWireChecks(t *testing.T) {
	entries := trace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`< starting up`,
		`> not json`,
		`< {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`< {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
	)
	ta := newTally()
	checkWire(ta, nil, entries)
	var got []string
	for _, f := range ta.findings {
		got = append(got, f.check+": "+f.why)
	}
	want := []string{
		CheckStdout + ": stdout line is not a JSON-RPC 2.0 message",
		CheckResponses + ": a response without an id: agents answer requests only, never notifications",
		CheckResponses + ": a response to id 1, which the client never sent or which was already answered",
		CheckResponses + ": the agent never answered this request",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCapsGating(t *testing.T) {
	entries := trace(
		`< {"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"S","path":"/w/a"}}`,
		`< {"jsonrpc":"2.0","id":2,"method":"terminal/create","params":{"sessionId":"S","command":"ls"}}`,
		`< {"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}`,
		`< {"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{}}`,
		`< {"jsonrpc":"2.0","method":"_vendor/ping","params":{}}`,
	)
	for _, tc := range []struct {
		caps Caps
		want int
	}{
		{Caps{}, 3},
		{Caps{FS: true}, 2},
		{Caps{FS: true, Terminal: true, Elicitation: true}, 0},
	} {
		ta := newTally()
		checkCaps(ta, tc.caps, entries)
		if len(ta.findings) != tc.want {
			t.Errorf("caps %+v: %d findings, want %d: %+v", tc.caps, len(ta.findings), tc.want, ta.findings)
		}
	}
}
