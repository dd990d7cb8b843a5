package mapping

import (
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/session"
)

func evNotice(n session.Notice) session.Event { return session.New(n) }

// Status (a notice with a title) is a `notice` update for a client that
// takes them and agent text otherwise, live and on replay alike; the
// agent's other words (command output, old text-only events) stay text.
func TestNotices(t *testing.T) {
	retry := session.Notice{Text: "\n\n*Model request failed (HTTP 503); retrying in 1.0s, attempt 1 of 5…*\n\n",
		Severity: "warning", Title: "Retrying the model request", Description: "HTTP 503; attempt 1 of 5 in 1.0s"}
	cases := []struct {
		name    string
		notices bool
		n       session.Notice
		want    string // "" for nothing at all
	}{
		{"asked: the titled notice", true, retry,
			`{"sessionUpdate":"notice","severity":"warning","title":"Retrying the model request","description":"HTTP 503; attempt 1 of 5 in 1.0s"}`},
		{"not asked: today's agent text", false, retry,
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\n\n*Model request failed (HTTP 503); retrying in 1.0s, attempt 1 of 5…*\n\n"},"messageId":"agent-0"}`},
		{"asked, text without a title (command output, an old event): text", true,
			session.Notice{Text: "Permission mode is now **plan**."},
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Permission mode is now **plan**."},"messageId":"agent-0"}`},
		{"asked, an unknown severity is info", true, session.Notice{Title: "x", Severity: "loud"},
			`{"sessionUpdate":"notice","severity":"info","title":"x"}`},
		{"not asked, a notice without text: made from its title", false, session.Notice{Title: "Session not saved", Description: "The disk is full."},
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\n\n*Session not saved. The disk is full.*\n\n"},"messageId":"agent-0"}`},
		{"asked, a blank title: text", true, session.Notice{Title: " ", Text: "x"},
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":"agent-0"}`},
		{"not asked, nothing to say", false, session.Notice{}, ""},
	}
	for _, c := range cases {
		for _, replay := range []bool{false, true} {
			got := strings.Join(run(t, Options{Cwd: cwd, Notices: c.notices, Replay: replay}, evNotice(c.n)), "\n")
			if got != c.want {
				t.Errorf("%s (replay %v):\n got %s\nwant %s", c.name, replay, got, c.want)
			}
		}
	}
}

// Terminal output deltas: live output as _meta.terminal_output_delta
// appends when the client asked; without Zed's terminal the final update
// still carries the whole console block, and a replay ends the same way.
func TestTerminalOutputDelta(t *testing.T) {
	delta := Options{Cwd: cwd, TerminalOutputDelta: true}
	both := Options{Cwd: cwd, TerminalOutputDelta: true, TerminalOutput: true}
	result := evResult("t1", withMeta(ok("x"), termMeta{Output: "a\nb\n", ExitCode: intp(0)}))
	live := []session.Event{evCall("t1", "bash", `{"command":"ls"}`), evOut("t1", "a\n"), evOut("t1", "b\n"), result}
	call := `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","name":"bash","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}}],"rawInput":{"command":"ls"}}`
	final := `{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"bash","status":"completed","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"content","content":{"type":"text","text":"` + "```console\\na\\nb\\n```" + `"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"x"}}]}`
	cases := []struct {
		name string
		o    Options
		evs  []session.Event
		want []string
	}{
		{"delta only, live: appends, then the whole console", delta, live, []string{call,
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"bash","_meta":{"terminal_output_delta":{"data":"a\n","terminal_id":"t1"}}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"bash","_meta":{"terminal_output_delta":{"data":"b\n","terminal_id":"t1"}}}`,
			final}},
		{"delta only, replay: no output was logged, the final update has it", Options{Cwd: cwd, TerminalOutputDelta: true, Replay: true},
			[]session.Event{live[0], result}, []string{call, final}},
		{"delta and Zed's terminal: the terminal card, output as deltas", both, live, []string{
			`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","name":"bash","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"terminal","terminalId":"t1"}],"rawInput":{"command":"ls"},"_meta":{"terminal_info":{"cwd":"/work/proj","terminal_id":"t1"}}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"bash","_meta":{"terminal_output_delta":{"data":"a\n","terminal_id":"t1"}}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"bash","_meta":{"terminal_output_delta":{"data":"b\n","terminal_id":"t1"}}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"bash","status":"completed","rawOutput":[{"type":"content","content":{"type":"text","text":"x"}}],"_meta":{"terminal_exit":{"exit_code":0,"signal":null,"terminal_id":"t1"}}}`}},
	}
	for _, c := range cases {
		// The fake terminal tool is "term"; this test names it bash, the registry name.
		ts := testTools(t)
		ts["bash"] = ts["term"]
		tr := New(ts, c.o)
		var got []string
		for _, ev := range c.evs {
			got = append(got, wire(t, tr.Translate(ev))...)
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}
