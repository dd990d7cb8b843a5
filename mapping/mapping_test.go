package mapping

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// toolSet is a Tools of test-only definitions.
type toolSet map[string]*registry.Def

func (ts toolSet) Get(name string) *registry.Def { return ts[name] }

func define[In, Out any](t *testing.T, ts toolSet, tool registry.Tool[In, Out]) {
	t.Helper()
	if tool.Run == nil {
		tool.Run = func(context.Context, *registry.Call, In) (Out, error) { var o Out; return o, nil }
	}
	d, err := registry.Define(tool)
	if err != nil {
		t.Fatal(err)
	}
	ts[d.Name] = d
}

type pathArgs struct {
	Path string `json:"path"`
}

type cmdArgs struct {
	Command string `json:"command"`
	Workdir string `json:"workdir,omitempty"`
}

// termMeta is what the fake terminal tool stores in its result.
type termMeta struct {
	Output    string `json:"output"`
	ExitCode  *int   `json:"exit_code"`
	Signal    string `json:"signal,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Stopped   string `json:"stopped,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

func testTools(t *testing.T) toolSet {
	ts := toolSet{}
	define(t, ts, registry.Tool[pathArgs, string]{Name: "look",
		PresentCall: func(in pathArgs) registry.View {
			return registry.GenericCard{Title: "Look " + in.Path, Kind: "read", Locations: []registry.Location{{Path: in.Path, Line: 3}}}
		},
		PresentResult: func(in pathArgs, r registry.Result) registry.View {
			if r.IsError {
				return nil
			}
			return registry.GenericCard{Title: "Looked " + in.Path, Content: []registry.Content{registry.Text("shown: " + r.Text())}}
		},
	})
	define(t, ts, registry.Tool[pathArgs, string]{Name: "plain"})
	define(t, ts, registry.Tool[pathArgs, string]{Name: "panicky",
		PresentCall:   func(pathArgs) registry.View { panic("call presenter broke") },
		PresentResult: func(pathArgs, registry.Result) registry.View { panic("result presenter broke") },
	})
	define(t, ts, registry.Tool[pathArgs, string]{Name: "liar",
		PresentCall: func(in pathArgs) registry.View { return registry.GenericCard{Title: "Liar"} },
		PresentResult: func(pathArgs, registry.Result) registry.View {
			return registry.TerminalCard{Command: "x", Output: "not a terminal"}
		},
	})
	define(t, ts, registry.Tool[cmdArgs, string]{Name: "term",
		PresentCall: func(in cmdArgs) registry.View {
			return registry.TerminalCard{Command: in.Command, Cwd: in.Workdir, Description: "runs it"}
		},
		PresentResult: func(in cmdArgs, r registry.Result) registry.View {
			var m termMeta
			if json.Unmarshal(r.Meta, &m) != nil {
				return nil
			}
			return registry.TerminalCard{Command: in.Command, Output: m.Output, ExitCode: m.ExitCode,
				Signal: m.Signal, TimedOut: m.TimedOut, Stopped: m.Stopped, Truncated: m.Truncated}
		},
	})
	define(t, ts, registry.Tool[pathArgs, string]{Name: "edit",
		PresentCall: func(in pathArgs) registry.View {
			old := "a"
			return registry.DiffCard{Title: "Edit " + in.Path, Diffs: []registry.FileDiff{{Path: in.Path, OldText: &old, NewText: "b"}}}
		},
		PresentResult: func(in pathArgs, r registry.Result) registry.View {
			var ds []registry.FileDiff
			if r.IsError || json.Unmarshal(r.Meta, &ds) != nil {
				return nil
			}
			return registry.DiffCard{Title: "Edit " + in.Path, Diffs: ds}
		},
	})
	define(t, ts, registry.Tool[pathArgs, string]{Name: "change",
		PresentCall: func(in pathArgs) registry.View {
			return registry.DiffCard{Title: "Change " + in.Path, Locations: []registry.Location{{Path: in.Path}}}
		},
		PresentResult: func(in pathArgs, r registry.Result) registry.View {
			var m lineMeta
			if r.IsError || json.Unmarshal(r.Meta, &m) != nil {
				return nil
			}
			return registry.DiffCard{Title: "Change " + in.Path, Diffs: m.Diffs, Locations: []registry.Location{{Path: in.Path, Line: m.Line}}}
		},
	})
	many := func() []registry.Location {
		var locs []registry.Location
		for i := 1; i <= 12; i++ {
			locs = append(locs, registry.Location{Path: fmt.Sprintf("f%d", i), Line: i})
		}
		return locs
	}
	define(t, ts, registry.Tool[pathArgs, string]{Name: "search",
		PresentCall: func(pathArgs) registry.View {
			return registry.GenericCard{Title: "Search", Kind: "search", Locations: many()}
		},
		PresentResult: func(pathArgs, registry.Result) registry.View {
			return registry.GenericCard{Title: "Found", Kind: "search", Locations: many()}
		},
	})
	define(t, ts, registry.Tool[pathArgs, string]{Name: "runcode",
		PresentCall: func(pathArgs) registry.View {
			return registry.GenericCard{Title: "Sum the files", Kind: "execute", Content: []registry.Content{registry.Text("code")}}
		},
	})
	define(t, ts, registry.Tool[json.RawMessage, string]{Name: "mcp", Parameters: []byte(`{"type":"object"}`),
		PresentCall: func(json.RawMessage) registry.View { return registry.GenericCard{Title: "srv: tool", Kind: "other"} },
	})
	return ts
}

// lineMeta is what the fake change tool stores: hunks and the first changed line.
type lineMeta struct {
	Diffs []registry.FileDiff `json:"diffs"`
	Line  int                 `json:"line"`
}

const cwd = "/work/proj"

func evCall(id, name, args string) session.Event {
	return session.New(session.ToolCall{CallID: id, Name: name, Args: json.RawMessage(args)})
}

func evStatus(id, status string) session.Event {
	return session.New(session.ToolStatus{CallID: id, Status: status})
}

func evOut(id, data string) session.Event {
	return session.New(session.ToolOutput{CallID: id, Data: data})
}

func evResult(id string, r registry.Result) session.Event {
	return session.New(session.ToolResult{CallID: id, Result: r})
}

func ok(text string) registry.Result {
	return registry.Result{Content: []registry.Content{registry.Text(text)}}
}

func withMeta(r registry.Result, meta any) registry.Result {
	r.Meta, _ = json.Marshal(meta)
	return r
}

func intp(i int) *int { return &i }

// wire renders updates as the update objects of session/update, one a line.
func wire(t *testing.T, us []acp.Update) []string {
	t.Helper()
	var out []string
	for _, u := range us {
		b, err := json.Marshal(acp.SessionNotification{SessionID: "s", Update: u})
		if err != nil {
			t.Fatalf("marshal %T: %v", u, err)
		}
		var n struct {
			Update json.RawMessage `json:"update"`
		}
		_ = json.Unmarshal(b, &n)
		out = append(out, string(n.Update))
	}
	return out
}

func run(t *testing.T, o Options, evs ...session.Event) []string {
	t.Helper()
	tr := New(testTools(t), o)
	var us []acp.Update
	for _, ev := range evs {
		us = append(us, tr.Translate(ev)...)
	}
	return wire(t, us)
}

func TestCards(t *testing.T) {
	on := Options{Cwd: cwd, TerminalOutput: true}
	off := Options{Cwd: cwd}
	tests := []struct {
		name string
		o    Options
		evs  []session.Event
		want []string
	}{
		{
			name: "generic card: pending, unchanged while awaiting permission, in_progress, completed",
			o:    on,
			evs: []session.Event{evCall("c1", "look", `{"path":"/work/proj/src/a.go"}`), evStatus("c1", "awaiting_permission"),
				evStatus("c1", "running"), evResult("c1", ok("body"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Look src/a.go","name":"look","kind":"read","status":"pending","locations":[{"path":"/work/proj/src/a.go","line":3}],"rawInput":{"path":"/work/proj/src/a.go"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"look","status":"in_progress"}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Looked src/a.go","name":"look","status":"completed","content":[{"type":"content","content":{"type":"text","text":"shown: body"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"body"}}]}`,
			},
		},
		{
			name: "relative path: location made absolute, title kept",
			o:    on,
			evs:  []session.Event{evCall("c1", "look", `{"path":"src/a.go"}`)},
			want: []string{`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Look src/a.go","name":"look","kind":"read","status":"pending","locations":[{"path":"/work/proj/src/a.go","line":3}],"rawInput":{"path":"src/a.go"}}`},
		},
		{
			name: "path outside the cwd: title not relativized",
			o:    on,
			evs:  []session.Event{evCall("c1", "look", `{"path":"/work/other/a.go"}`)},
			want: []string{`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Look /work/other/a.go","name":"look","kind":"read","status":"pending","locations":[{"path":"/work/other/a.go","line":3}],"rawInput":{"path":"/work/other/a.go"}}`},
		},
		{
			name: "a file named ..cache is inside the cwd",
			o:    on,
			evs:  []session.Event{evCall("c1", "look", `{"path":"/work/proj/..cache/x"}`)},
			want: []string{`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Look ..cache/x","name":"look","kind":"read","status":"pending","locations":[{"path":"/work/proj/..cache/x","line":3}],"rawInput":{"path":"/work/proj/..cache/x"}}`},
		},
		{
			name: "no presenters: generic card titled with the tool name, raw result",
			o:    on,
			evs:  []session.Event{evCall("c1", "plain", `{}`), evResult("c1", ok("out"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"plain","name":"plain","kind":"other","status":"pending","rawInput":{}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"plain","status":"completed","content":[{"type":"content","content":{"type":"text","text":"out"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"out"}}]}`,
			},
		},
		{
			name: "presenters that panic: generic card, raw result",
			o:    on,
			evs:  []session.Event{evCall("c1", "panicky", `{}`), evResult("c1", ok("out"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"panicky","name":"panicky","kind":"other","status":"pending","rawInput":{}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"panicky","status":"completed","content":[{"type":"content","content":{"type":"text","text":"out"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"out"}}]}`,
			},
		},
		{
			name: "unknown tool (an old log)",
			o:    on,
			evs:  []session.Event{evCall("c1", "gone", `{"a":1}`), evResult("c1", registry.ErrorResult("UNKNOWN_TOOL", "unknown tool"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"gone","name":"gone","kind":"other","status":"pending","rawInput":{"a":1}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"gone","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Error: unknown tool"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"Error: unknown tool"}}]}`,
			},
		},
		{
			name: "orphan terminal result: shown generically",
			o:    on,
			evs:  []session.Event{evCall("c1", "liar", `{"path":"a.go"}`), evResult("c1", ok("raw"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Liar","name":"liar","kind":"other","status":"pending","rawInput":{"path":"a.go"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"liar","status":"completed","content":[{"type":"content","content":{"type":"text","text":"raw"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"raw"}}]}`,
			},
		},
		{
			name: "result without a card: the card is created whole",
			o:    on,
			evs:  []session.Event{evResult("late", ok("x"))},
			want: []string{`{"sessionUpdate":"tool_call","toolCallId":"late","title":"Tool result","kind":"other","status":"completed","content":[{"type":"content","content":{"type":"text","text":"x"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"x"}}]}`},
		},
		{
			name: "a second result for a finished call sends nothing",
			o:    on,
			evs:  []session.Event{evCall("c1", "plain", `{}`), evResult("c1", ok("a")), evResult("c1", ok("b"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"plain","name":"plain","kind":"other","status":"pending","rawInput":{}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"plain","status":"completed","content":[{"type":"content","content":{"type":"text","text":"a"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"a"}}]}`,
			},
		},
		{
			name: "empty result: content left as it was, rawOutput set",
			o:    on,
			evs:  []session.Event{evCall("c1", "plain", `{}`), evResult("c1", registry.Result{})},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"plain","name":"plain","kind":"other","status":"pending","rawInput":{}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"plain","status":"completed","rawOutput":[{"type":"content","content":{"type":"text","text":""}}]}`,
			},
		},
		{
			name: "diff card: call-time snippet, then applied hunks; absolute paths, relative title",
			o:    off,
			evs: []session.Event{evCall("c1", "edit", `{"path":"README.md"}`), evStatus("c1", "running"),
				evResult("c1", withMeta(ok("edited"), []registry.FileDiff{{Path: "README.md", OldText: strp("x\na\n"), NewText: "x\nb\n"}}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit README.md","name":"edit","kind":"edit","status":"pending","content":[{"type":"diff","path":"/work/proj/README.md","oldText":"a","newText":"b"}],"locations":[{"path":"/work/proj/README.md"}],"rawInput":{"path":"README.md"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"edit","status":"in_progress"}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edit README.md","name":"edit","status":"completed","content":[{"type":"diff","path":"/work/proj/README.md","oldText":"x\na\n","newText":"x\nb\n"}],"rawOutput":[{"type":"content","content":{"type":"text","text":"edited"}}]}`,
			},
		},
		{
			name: "diff card with its first changed line: the result points at it (0-based for Zed)",
			o:    Options{Cwd: cwd, ZeroBasedLines: true},
			evs: []session.Event{evCall("c1", "change", `{"path":"a.go"}`),
				evResult("c1", withMeta(ok("done"), lineMeta{Line: 7, Diffs: []registry.FileDiff{{Path: "a.go", OldText: strp("a\n"), NewText: "b\n"}}}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Change a.go","name":"change","kind":"edit","status":"pending","locations":[{"path":"/work/proj/a.go"}],"rawInput":{"path":"a.go"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Change a.go","name":"change","status":"completed","content":[{"type":"diff","path":"/work/proj/a.go","oldText":"a\n","newText":"b\n"}],"locations":[{"path":"/work/proj/a.go","line":6}],"rawOutput":[{"type":"content","content":{"type":"text","text":"done"}}]}`,
			},
		},
		{
			name: "0-based lines: a read at line 3 points at row 2",
			o:    Options{Cwd: cwd, ZeroBasedLines: true},
			evs:  []session.Event{evCall("c1", "look", `{"path":"a.go"}`)},
			want: []string{`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Look a.go","name":"look","kind":"read","status":"pending","locations":[{"path":"/work/proj/a.go","line":2}],"rawInput":{"path":"a.go"}}`},
		},
		{
			name: "search card: at most MaxSearchLocations locations, call and result",
			o:    on,
			evs:  []session.Event{evCall("c1", "search", `{"path":"x"}`), evResult("c1", ok("many"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Search","name":"search","kind":"search","status":"pending","locations":[{"path":"/work/proj/f1","line":1},{"path":"/work/proj/f2","line":2},{"path":"/work/proj/f3","line":3},{"path":"/work/proj/f4","line":4},{"path":"/work/proj/f5","line":5}],"rawInput":{"path":"x"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Found","name":"search","status":"completed","content":[{"type":"content","content":{"type":"text","text":"many"}}],"locations":[{"path":"/work/proj/f1","line":1},{"path":"/work/proj/f2","line":2},{"path":"/work/proj/f3","line":3},{"path":"/work/proj/f4","line":4},{"path":"/work/proj/f5","line":5}],"rawOutput":[{"type":"content","content":{"type":"text","text":"many"}}]}`,
			},
		},
		{
			name: "a generic card of kind execute (run_code) goes out as other, with its content",
			o:    on,
			evs:  []session.Event{evCall("c1", "runcode", `{"path":"x"}`)},
			want: []string{`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Sum the files","name":"runcode","kind":"other","status":"pending","content":[{"type":"content","content":{"type":"text","text":"code"}}],"rawInput":{"path":"x"}}`},
		},
		{
			name: "diff card, new file: oldText null",
			o:    off,
			evs: []session.Event{evCall("c1", "edit", `{"path":"/work/proj/new.txt"}`),
				evResult("c1", withMeta(ok("created"), []registry.FileDiff{{Path: "/work/proj/new.txt", NewText: "hi\n"}}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit new.txt","name":"edit","kind":"edit","status":"pending","content":[{"type":"diff","path":"/work/proj/new.txt","oldText":"a","newText":"b"}],"locations":[{"path":"/work/proj/new.txt"}],"rawInput":{"path":"/work/proj/new.txt"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edit new.txt","name":"edit","status":"completed","content":[{"type":"diff","path":"/work/proj/new.txt","oldText":null,"newText":"hi\n"}],"rawOutput":[{"type":"content","content":{"type":"text","text":"created"}}]}`,
			},
		},
		{
			name: "diff card, failed: the error text replaces the snippet",
			o:    off,
			evs:  []session.Event{evCall("c1", "edit", `{"path":"a.txt"}`), evResult("c1", registry.ErrorResult("REJECTED", `the user rejected tool "edit"`))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit a.txt","name":"edit","kind":"edit","status":"pending","content":[{"type":"diff","path":"/work/proj/a.txt","oldText":"a","newText":"b"}],"locations":[{"path":"/work/proj/a.txt"}],"rawInput":{"path":"a.txt"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"edit","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Error: the user rejected tool \"edit\""}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"Error: the user rejected tool \"edit\""}}]}`,
			},
		},
		{
			name: "terminal, convention on: info, streamed output, exit; failed on non-zero exit; no final content",
			o:    on,
			evs: []session.Event{evCall("t1", "term", `{"command":"go test ./...","workdir":"sub"}`), evStatus("t1", "running"),
				evOut("t1", "ok  a\n"), evOut("t1", "FAIL b\n"),
				evResult("t1", withMeta(ok("model text"), termMeta{Output: "ok  a\nFAIL b\n", ExitCode: intp(2)}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"go test ./...","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"terminal","terminalId":"t1"}],"rawInput":{"command":"go test ./...","workdir":"sub"},"_meta":{"terminal_info":{"cwd":"/work/proj/sub","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"in_progress"}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","_meta":{"terminal_output":{"data":"ok  a\n","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","_meta":{"terminal_output":{"data":"FAIL b\n","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"failed","rawOutput":[{"type":"content","content":{"type":"text","text":"model text"}}],"_meta":{"terminal_exit":{"exit_code":2,"signal":null,"terminal_id":"t1"}}}`,
			},
		},
		{
			name: "terminal, convention on, replayed (no live output): stored output before the exit",
			o:    Options{Cwd: cwd, TerminalOutput: true, Replay: true},
			evs: []session.Event{evCall("t1", "term", `{"command":"ls"}`),
				evResult("t1", withMeta(ok("x"), termMeta{Output: "a\nb\n", ExitCode: intp(0), Truncated: true}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"terminal","terminalId":"t1"}],"rawInput":{"command":"ls"},"_meta":{"terminal_info":{"cwd":"/work/proj","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","_meta":{"terminal_output":{"data":"a\nb\n","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"completed","rawOutput":[{"type":"content","content":{"type":"text","text":"x"}}],"_meta":{"terminal_exit":{"exit_code":0,"signal":null,"terminal_id":"t1"}}}`,
			},
		},
		{
			name: "terminal, killed by a signal: exit code null, failed",
			o:    on,
			evs: []session.Event{evCall("t1", "term", `{"command":"sleep 9"}`),
				evResult("t1", withMeta(ok("x"), termMeta{ExitCode: intp(-1), Signal: "SIGTERM"}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep 9","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"terminal","terminalId":"t1"}],"rawInput":{"command":"sleep 9"},"_meta":{"terminal_info":{"cwd":"/work/proj","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"failed","rawOutput":[{"type":"content","content":{"type":"text","text":"x"}}],"_meta":{"terminal_exit":{"exit_code":null,"signal":"SIGTERM","terminal_id":"t1"}}}`,
			},
		},
		{
			name: "terminal, convention on, stopped by a limit: which limit, and where it is set, written into the terminal before the exit",
			o:    on,
			evs: []session.Event{evCall("t1", "term", `{"command":"sleep 9"}`),
				evResult("t1", withMeta(ok("x"), termMeta{ExitCode: intp(-1), Signal: "SIGTERM", TimedOut: true, Stopped: "timed out, stopped after 1s: timeouts.bash in /c.yaml"}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep 9","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"terminal","terminalId":"t1"}],"rawInput":{"command":"sleep 9"},"_meta":{"terminal_info":{"cwd":"/work/proj","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","_meta":{"terminal_output":{"data":"\n[timed out, stopped after 1s: timeouts.bash in /c.yaml]\n","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"failed","rawOutput":[{"type":"content","content":{"type":"text","text":"x"}}],"_meta":{"terminal_exit":{"exit_code":null,"signal":"SIGTERM","terminal_id":"t1"}}}`,
			},
		},
		{
			name: "terminal, convention off, stopped by a limit: the exit line names it",
			o:    off,
			evs: []session.Event{evCall("t1", "term", `{"command":"sleep 9"}`),
				evResult("t1", withMeta(ok("x"), termMeta{Output: "so far\n", ExitCode: intp(-1), Signal: "SIGTERM", TimedOut: true, Stopped: "timed out, stopped after 1s: timeouts.bash in /c.yaml"}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep 9","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}}],"rawInput":{"command":"sleep 9"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"failed","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"content","content":{"type":"text","text":"` + "```" + `console\nso far\n[timed out, stopped after 1s: timeouts.bash in /c.yaml]\n` + "```" + `"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"x"}}]}`,
			},
		},
		{
			name: "terminal, convention on, rejected before it ran: the error written into the terminal, which is closed",
			o:    on,
			evs:  []session.Event{evCall("t1", "term", `{"command":"rm -rf x"}`), evResult("t1", registry.ErrorResult("REJECTED", `the user rejected tool "term"`))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"rm -rf x","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"terminal","terminalId":"t1"}],"rawInput":{"command":"rm -rf x"},"_meta":{"terminal_info":{"cwd":"/work/proj","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"failed","rawOutput":[{"type":"content","content":{"type":"text","text":"Error: the user rejected tool \"term\""}}],"_meta":{"terminal_exit":{"exit_code":null,"signal":null,"terminal_id":"t1"},"terminal_output":{"data":"\nError: the user rejected tool \"term\"\n","terminal_id":"t1"}}}`,
			},
		},
		{
			name: "terminal, convention on, aborted while running: error written into the terminal",
			o:    on,
			evs: []session.Event{evCall("t1", "term", `{"command":"make"}`), evStatus("t1", "running"), evOut("t1", "cc a.c\n"),
				evResult("t1", registry.ErrorResult("ABORTED", "tool call aborted"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"make","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"terminal","terminalId":"t1"}],"rawInput":{"command":"make"},"_meta":{"terminal_info":{"cwd":"/work/proj","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"in_progress"}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","_meta":{"terminal_output":{"data":"cc a.c\n","terminal_id":"t1"}}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"failed","rawOutput":[{"type":"content","content":{"type":"text","text":"Error: tool call aborted"}}],"_meta":{"terminal_exit":{"exit_code":null,"signal":null,"terminal_id":"t1"},"terminal_output":{"data":"\nError: tool call aborted\n","terminal_id":"t1"}}}`,
			},
		},
		{
			name: "terminal, convention off: console block refreshed as output grows, exit line at the end",
			o:    off,
			evs: []session.Event{evCall("t1", "term", `{"command":"go vet"}`), evOut("t1", "a\n"), evOut("t1", "b\n"),
				evResult("t1", withMeta(ok("x"), termMeta{Output: "a\nb\n", ExitCode: intp(1)}))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"go vet","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}}],"rawInput":{"command":"go vet"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"content","content":{"type":"text","text":"` + "```console\\na\\n```" + `"}}]}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"content","content":{"type":"text","text":"` + "```console\\na\\nb\\n```" + `"}}]}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"failed","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"content","content":{"type":"text","text":"` + "```console\\na\\nb\\n[exit code: 1]\\n```" + `"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"x"}}]}`,
			},
		},
		{
			name: "terminal, convention off, rejected: description and error, no console",
			o:    off,
			evs:  []session.Event{evCall("t1", "term", `{"command":"x"}`), evResult("t1", registry.ErrorResult("REJECTED", "no"))},
			want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"x","name":"term","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"runs it"}}],"rawInput":{"command":"x"}}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"term","status":"failed","content":[{"type":"content","content":{"type":"text","text":"runs it"}},{"type":"content","content":{"type":"text","text":"Error: no"}}],"rawOutput":[{"type":"content","content":{"type":"text","text":"Error: no"}}]}`,
			},
		},
		{
			name: "live output of a non-terminal card is not shown",
			o:    on,
			evs:  []session.Event{evCall("c1", "plain", `{}`), evOut("c1", "zzz")},
			want: []string{`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"plain","name":"plain","kind":"other","status":"pending","rawInput":{}}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.o, tt.evs...)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func strp(s string) *string { return &s }

func TestReplayedOutputIsChunked(t *testing.T) {
	// 200 KiB of 3-byte characters: the stored output goes out in pieces of
	// at most MaxOutputChunk bytes, none splitting a character.
	out := strings.Repeat("€", 200<<10/3)
	tr := New(testTools(t), Options{Cwd: cwd, TerminalOutput: true, Replay: true})
	tr.Translate(evCall("t1", "term", `{"command":"cat big"}`))
	us := tr.Translate(evResult("t1", withMeta(ok("x"), termMeta{Output: out, ExitCode: intp(0)})))
	var joined strings.Builder
	for _, u := range us[:len(us)-1] {
		data := u.(acp.ToolCallUpdate).Meta["terminal_output"].(map[string]any)["data"].(string)
		if len(data) > MaxOutputChunk || !utf8.ValidString(data) {
			t.Fatalf("chunk of %d bytes, valid UTF-8 %v", len(data), utf8.ValidString(data))
		}
		joined.WriteString(data)
	}
	if joined.String() != out {
		t.Error("the chunks do not add up to the output")
	}
	if min := (len(out)+MaxOutputChunk-1)/MaxOutputChunk + 1; len(us) < min || len(us) > min+1 { // the chunks + the exit
		t.Errorf("got %d updates, want %d or %d", len(us), min, min+1)
	}
}

func TestConsoleIsBounded(t *testing.T) {
	tr := New(testTools(t), Options{Cwd: cwd})
	tr.Translate(evCall("t1", "term", `{"command":"yes"}`))
	line := strings.Repeat("y", 995) + "```\n" // backticks in the output must not close the fence
	var last []acp.Update
	for range 100 {
		last = tr.Translate(evOut("t1", line))
	}
	text := last[0].(acp.ToolCallUpdate).Content[1].Content.Text
	if len(text) > ConsoleLimit+200 {
		t.Errorf("console block of %d bytes, limit %d", len(text), ConsoleLimit)
	}
	if !strings.HasPrefix(text, "````console\n[") || !strings.Contains(text, "bytes of earlier output not shown]\n") {
		t.Errorf("console block starts %q", text[:60])
	}
	total := 100 * len(line)
	var shown, dropped int
	body := strings.TrimSuffix(strings.TrimPrefix(text, "````console\n"), "\n````")
	head, rest, _ := strings.Cut(body, "\n")
	fmt.Sscanf(head, "[%d bytes", &dropped)
	shown = len(rest) + 1 // the trailing newline was trimmed
	if dropped+shown != total {
		t.Errorf("dropped %d + shown %d != total %d", dropped, shown, total)
	}
}

func TestPermissionToolCall(t *testing.T) {
	tests := []struct {
		name  string
		o     Options
		call  session.Event
		want  string
		known bool
	}{
		{"command: the exact command line, no content", Options{Cwd: cwd, TerminalOutput: true}, evCall("t1", "term", `{"command":"go test ./..."}`),
			`{"toolCallId":"t1","title":"go test ./...","name":"term","kind":"execute","status":"pending","rawInput":{"command":"go test ./..."}}`, true},
		{"edit: the path and the diff it would apply", Options{Cwd: cwd}, evCall("e1", "edit", `{"path":"/work/proj/a.txt"}`),
			`{"toolCallId":"e1","title":"Edit a.txt","name":"edit","kind":"edit","status":"pending","content":[{"type":"diff","path":"/work/proj/a.txt","oldText":"a","newText":"b"}],"locations":[{"path":"/work/proj/a.txt"}],"rawInput":{"path":"/work/proj/a.txt"}}`, true},
		{"kind other (MCP): the arguments as content", Options{Cwd: cwd}, evCall("m1", "mcp", `{"query":"select 1","limit":2}`),
			`{"toolCallId":"m1","title":"srv: tool","name":"mcp","kind":"other","status":"pending","content":[{"type":"content","content":{"type":"text","text":"` + "```json\\n{\\n  \\\"limit\\\": 2,\\n  \\\"query\\\": \\\"select 1\\\"\\n}\\n```" + `"}}],"rawInput":{"query":"select 1","limit":2}}`, true},
		{"kind other without arguments: no content", Options{Cwd: cwd}, evCall("m2", "mcp", `{}`),
			`{"toolCallId":"m2","title":"srv: tool","name":"mcp","kind":"other","status":"pending","rawInput":{}}`, true},
		{"generic", Options{Cwd: cwd}, evCall("g1", "look", `{"path":"x"}`),
			`{"toolCallId":"g1","title":"Look x","name":"look","kind":"read","status":"pending","locations":[{"path":"/work/proj/x","line":3}],"rawInput":{"path":"x"}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := New(testTools(t), tt.o)
			tr.Translate(tt.call)
			c := tt.call.Payload.(session.ToolCall)
			u, known := tr.PermissionToolCall(c.CallID)
			b, _ := json.Marshal(u)
			if string(b) != tt.want || known != tt.known {
				t.Errorf("got %s (%v)\nwant %s", b, known, tt.want)
			}
		})
	}
	if _, known := New(nil, Options{}).PermissionToolCall("nope"); known {
		t.Error("an unknown call reported as known")
	}
}

func TestRawJSON(t *testing.T) {
	for in, want := range map[string]string{``: `{}`, `{"a":1}`: `{"a":1}`, `{"a":`: `"{\"a\":"`} {
		if got := string(rawJSON(json.RawMessage(in))); got != want {
			t.Errorf("rawJSON(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestChunksAndTail(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want []string
	}{
		{"abcdef", 4, []string{"abcd", "ef"}},
		{"ab€cd", 4, []string{"ab", "€c", "d"}},
		{"", 4, nil},
		{"abcd", 4, []string{"abcd"}},
	} {
		if got := chunks(tt.s, tt.n); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("chunks(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
	for _, tt := range []struct {
		s    string
		n    int
		want string
		cut  int
	}{
		{"one\ntwo\nthree\n", 9, "three\n", 8},
		{"abc€def", 5, "def", 6},
		{"short", 10, "short", 0},
	} {
		if got, cut := tail(tt.s, tt.n); got != tt.want || cut != tt.cut {
			t.Errorf("tail(%q, %d) = %q, %d; want %q, %d", tt.s, tt.n, got, cut, tt.want, tt.cut)
		}
	}
}

// A long error written into a closed terminal is chunked like output.
func TestTerminalFailureIsChunked(t *testing.T) {
	tr := New(testTools(t), Options{Cwd: cwd, TerminalOutput: true})
	tr.Translate(evCall("t1", "term", `{"command":"x"}`))
	msg := strings.Repeat("é", 3*MaxOutputChunk/2)
	us := tr.Translate(evResult("t1", registry.ErrorResult("TOOL_ERROR", msg)))
	var joined strings.Builder
	for _, u := range us {
		m := u.(acp.ToolCallUpdate).Meta
		if o, ok := m["terminal_output"].(map[string]any); ok {
			data := o["data"].(string)
			if len(data) > MaxOutputChunk || !utf8.ValidString(data) {
				t.Fatalf("chunk of %d bytes", len(data))
			}
			joined.WriteString(data)
		}
	}
	if joined.String() != "\nError: "+msg+"\n" {
		t.Error("the chunks do not add up to the error")
	}
	if last := us[len(us)-1].(acp.ToolCallUpdate); last.Meta["terminal_exit"] == nil || last.Status == nil {
		t.Errorf("the last update does not close the terminal: %+v", last)
	}
}
