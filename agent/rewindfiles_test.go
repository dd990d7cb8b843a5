package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// changeEvent is the tool result of a change of path from old (nil: new)
// to new, as the fs tools log it.
func changeEvent(seq int64, path string, old *string, new string) session.Event {
	hunks := diffs.Compute(path, old, new)
	var before *diffs.Version
	if old != nil {
		v := diffs.VersionOf(*old)
		before = &v
	}
	meta, _ := json.Marshal(map[string]any{"diffs": hunks, "undo": diffs.Record(path, before, diffs.VersionOf(new), hunks)})
	return session.Event{Seq: seq, Payload: session.ToolResult{CallID: "c", Result: registry.Result{Meta: meta}}}
}

func ptr(s string) *string { return &s }

// TestPlanFiles: which files a rewind puts back, from the log and the
// files as they are.
func TestPlanFiles(t *testing.T) {
	prompt := session.Event{Seq: 10, Payload: session.UserMessage{Text: "go"}}
	bash := session.Event{Seq: 13, Payload: session.ToolCall{CallID: "b", Name: "bash", Args: json.RawMessage(`{"command":"sed -i s/2/X/ f\nand more"}`)}}
	tests := []struct {
		name     string
		before   int64 // the message rewound to; 0: prompt's
		evs      []session.Event
		disk     map[string]string
		restore  map[string]string // path -> content ("<removed>")
		left     []string
		commands []string
	}{
		{name: "a chain of changes goes back to before the first",
			evs:     []session.Event{changeEvent(5, "f", nil, "0\n"), prompt, changeEvent(11, "f", ptr("0\n"), "1\n"), changeEvent(12, "f", ptr("1\n"), "2\n")},
			disk:    map[string]string{"f": "2\n"},
			restore: map[string]string{"f": "0\n"}},
		{name: "a file made after the message is removed",
			evs:     []session.Event{prompt, changeEvent(11, "n", nil, "new\n"), changeEvent(12, "n", ptr("new\n"), "newer\n")},
			disk:    map[string]string{"n": "newer\n"},
			restore: map[string]string{"n": "<removed>"}},
		{name: "changed since the agent left it",
			evs:  []session.Event{prompt, changeEvent(11, "f", ptr("0\n"), "1\n")},
			disk: map[string]string{"f": "mine\n"},
			left: []string{"f: " + leftChanged}},
		{name: "gone since the agent left it",
			evs:  []session.Event{prompt, changeEvent(11, "f", ptr("0\n"), "1\n")},
			disk: map[string]string{},
			left: []string{"f: " + leftChanged}},
		{name: "a command changed it between two edits",
			evs:      []session.Event{prompt, changeEvent(11, "f", ptr("0\n"), "1\n"), bash, changeEvent(14, "f", ptr("X\n"), "2\n")},
			disk:     map[string]string{"f": "2\n"},
			left:     []string{"f: " + leftBetween},
			commands: []string{"sed -i s/2/X/ f …"}},
		{name: "a change an older bridge logged without its undo record",
			evs: []session.Event{prompt, {Seq: 11, Payload: session.ToolResult{CallID: "c", Result: registry.Result{
				Meta: json.RawMessage(`{"diffs":[{"path":"f","oldText":"0\n","newText":"1\n"}]}`)}}}},
			disk: map[string]string{"f": "1\n"},
			left: []string{"f: " + leftUnrecorded}},
		{name: "changes before the message stay",
			evs:  []session.Event{changeEvent(5, "f", ptr("0\n"), "1\n"), prompt},
			disk: map[string]string{"f": "1\n"}},
		{name: "a second rewind reads what the first put back", before: 4,
			evs: []session.Event{{Seq: 4, Payload: session.UserMessage{}}, changeEvent(5, "f", ptr("0\n"), "1\n"), prompt,
				changeEvent(11, "f", ptr("1\n"), "2\n"),
				{Seq: 20, Payload: session.FilesRestored{Before: 10, Restored: []session.FileRestored{{Path: "f", Hash: diffs.Hash("1\n"), Undid: []int64{11}}}}}},
			disk:    map[string]string{"f": "1\n"},
			restore: map[string]string{"f": "0\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := func(path string) (string, bool, error) {
				c, ok := tt.disk[path]
				return c, ok, nil
			}
			before := tt.before
			if before == 0 {
				before = prompt.Seq
			}
			plan := planFiles(tt.evs, before, read, func(name string) bool { return name == "bash" })
			got := map[string]string{}
			for _, r := range plan.restore {
				got[r.path] = r.content
				if r.removed {
					got[r.path] = "<removed>"
				}
			}
			var left []string
			for _, l := range plan.left {
				left = append(left, l.Path+": "+l.Reason)
			}
			if tt.restore == nil {
				tt.restore = map[string]string{}
			}
			if d := cmp.Diff(tt.restore, got); d != "" {
				t.Errorf("restored (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.left, left); d != "" {
				t.Errorf("left (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.commands, plan.commands); d != "" {
				t.Errorf("commands (-want +got):\n%s", d)
			}
		})
	}
}

// TestForkAtMessage: session/fork with _meta.jetbrains.air.fork keeps the
// history up to the message named (and the rest of its turn); the source
// is left as it was; a message that is not there is an error and leaves
// no session.
func TestForkAtMessage(t *testing.T) {
	e := newStEnv(t)
	rec := &recorder{p: stScript(t, append(rewindResponses, `{"parts":[{"text":"in the fork"}]}`)...)}
	a, _, id := threeTurns(t, e, rec, acp.ClientCapabilities{})
	var firstAnswer string
	for _, m := range a.liveSession(t, id).rw.sentMessages(a.liveSession(t, id).log.Events()) {
		if m.user == nil {
			firstAnswer = m.id
			break
		}
	}
	fork := func(point map[string]any) (*acp.ForkSessionResponse, error) {
		return a.ForkSession(t.Context(), &acp.ForkSessionRequest{SessionID: id, Cwd: e.cwd,
			Meta: acp.Meta{"jetbrains": map[string]any{"air": map[string]any{"fork": point}}}})
	}
	if _, err := fork(map[string]any{"messageId": "agent-99999"}); !isCode(err, acp.CodeResourceNotFound) {
		t.Errorf("a fork at a message that is not there: %v", err)
	}
	if list, _ := a.ListSessions(t.Context(), &acp.ListSessionsRequest{}); len(list.Sessions) != 1 {
		t.Errorf("the failed fork left a session: %+v", list.Sessions)
	}
	r, err := fork(map[string]any{"messageId": firstAnswer})
	if err != nil {
		t.Fatal(err)
	}
	e.promptStop(a, r.SessionID, "fork on")
	reqs := rec.requests()
	if got := reqs[len(reqs)-1].Messages; len(got) != len(reqs[1].Messages)+2 {
		t.Errorf("the fork's request holds %d messages, want the first turn and its prompt", len(got))
	}
	if n := len(a.liveSession(t, id).rw.marks()); n != 3 {
		t.Errorf("the source has %d prompts, want its 3", n)
	}
}
