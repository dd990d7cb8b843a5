package mapping

import (
	"encoding/json"
	"testing"

	"github.com/acp-bridge/acp-bridge/session"
)

func TestControlsTranslate(t *testing.T) {
	ctl := session.Controls{Mode: "plan", Modes: []session.Choice{{ID: "ask", Name: "Ask"}, {ID: "plan", Name: "Plan"}},
		Model: "p/a", Models: []session.Choice{{ID: "p/a", Name: "A"}}}
	tests := []struct {
		name string
		evs  []session.Event // translated in order; want is for the last
		want []string
	}{{
		name: "plan: priorities default to medium, statuses pass or become pending",
		evs: []session.Event{session.New(session.Plan{Entries: []session.PlanEntry{
			{Content: "a", Status: "completed", Priority: "high"}, {Content: "b", Status: "weird"}}})},
		want: []string{`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"completed"},{"content":"b","priority":"medium","status":"pending"}]}`},
	}, {
		name: "empty plan is an empty array",
		evs:  []session.Event{session.New(session.Plan{})},
		want: []string{`{"sessionUpdate":"plan","entries":[]}`},
	}, {
		name: "commands",
		evs: []session.Event{session.New(session.Commands{Commands: []session.Command{
			{Name: "help", Description: "List"}, {Name: "mode", Description: "Set", Hint: "ask | plan"}}})},
		want: []string{`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"help","description":"List"},{"name":"mode","description":"Set","input":{"hint":"ask | plan"}}]}`},
	}, {
		name: "title",
		evs:  []session.Event{session.New(session.Title{Title: "Fix it", UpdatedAt: "2026-12-02T14:00:00Z"})},
		want: []string{`{"sessionUpdate":"session_info_update","title":"Fix it","updatedAt":"2026-12-02T14:00:00Z"}`},
	}, {
		name: "usage without and with cost",
		evs:  []session.Event{session.New(session.Usage{Used: 1200, Size: 64000, Cost: 0.5, Currency: "USD"})},
		want: []string{`{"sessionUpdate":"usage_update","used":1200,"size":64000,"cost":{"amount":0.5,"currency":"USD"}}`},
	}, {
		name: "controls: both views",
		evs:  []session.Event{session.New(ctl)},
		want: []string{
			`{"sessionUpdate":"current_mode_update","currentModeId":"plan"}`,
			`{"sessionUpdate":"config_option_update","configOptions":[{"id":"mode","name":"Permission mode","description":"What tool calls may do without asking","category":"mode","type":"select","currentValue":"plan","options":[{"value":"ask","name":"Ask"},{"value":"plan","name":"Plan"}]},{"id":"model","name":"Model","category":"model","type":"select","currentValue":"p/a","options":[{"value":"p/a","name":"A"}]}]}`,
		},
	}, {
		name: "controls: an unchanged mode is not re-sent",
		evs:  []session.Event{session.New(ctl), session.New(ctl)},
		want: []string{
			`{"sessionUpdate":"config_option_update","configOptions":[{"id":"mode","name":"Permission mode","description":"What tool calls may do without asking","category":"mode","type":"select","currentValue":"plan","options":[{"value":"ask","name":"Ask"},{"value":"plan","name":"Plan"}]},{"id":"model","name":"Model","category":"model","type":"select","currentValue":"p/a","options":[{"value":"p/a","name":"A"}]}]}`,
		},
	}, {
		name: "context reset is not shown",
		evs:  []session.Event{session.New(session.ContextReset{Reason: "clear"})},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := New(nil, Options{Cwd: "/w"})
			var got []string
			for _, ev := range tc.evs {
				got = wire(t, tr.Translate(ev))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d updates %v, want %d", len(got), got, len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("update %d:\n got %s\nwant %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestModeState(t *testing.T) {
	st := ModeState(session.Controls{Mode: "ask", Modes: []session.Choice{{ID: "ask", Name: "Ask", Description: "d"}}})
	b, _ := json.Marshal(st)
	if want := `{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask","description":"d"}]}`; string(b) != want {
		t.Errorf("ModeState = %s, want %s", b, want)
	}
	if opts := ConfigOptions(session.Controls{Mode: "ask"}, false); len(opts) != 1 {
		t.Errorf("no models: %d options, want only the mode", len(opts))
	}
}
