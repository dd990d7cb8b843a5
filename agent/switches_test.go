package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

var takesBooleans = acp.ClientCapabilities{Session: acp.ClientSessionCaps{ConfigOptions: &acp.ClientConfigOptionCaps{Boolean: &acp.Empty{}}}}

// booleanIDs are the ids of the boolean options in a list, with values.
func booleanIDs(opts []acp.ConfigOption) map[string]any {
	out := map[string]any{}
	for _, o := range opts {
		if o.Type == acp.ConfigBoolean {
			out[o.ID] = o.CurrentValue
		}
	}
	return out
}

// The switches are boolean config options for a client that takes them,
// and for no other: not in session/new's options, nor in a
// config_option_update, nor in set_config_option's answer. A boolean set
// answers with the full list.
func TestSwitchesOnlyForClientsThatTakeThem(t *testing.T) {
	for _, tt := range []struct {
		name string
		caps acp.ClientCapabilities
		want map[string]any // the boolean options after show_thoughts is set off
	}{
		{"booleans", takesBooleans, map[string]any{mapping.ConfigAutoCompact: true, mapping.ConfigShowThoughts: false}},
		{"no booleans", acp.ClientCapabilities{}, map[string]any{}},
		{"configOptions without boolean", acp.ClientCapabilities{Session: acp.ClientSessionCaps{ConfigOptions: &acp.ClientConfigOptionCaps{}}}, map[string]any{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEditor(t, Options{Model: script(t, `{"responses":[{"parts":[{"text":"ok"}]}]}`)})
			if err := e.call(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: tt.caps}, &acp.InitializeResponse{}); err != nil {
				t.Fatal(err)
			}
			var s acp.NewSessionResponse
			if err := e.call(acp.MethodSessionNew, acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acp.McpServer{}}, &s); err != nil {
				t.Fatal(err)
			}
			wantNew := map[string]any{}
			if len(tt.want) > 0 {
				wantNew = map[string]any{mapping.ConfigAutoCompact: true, mapping.ConfigShowThoughts: true}
			}
			if got := booleanIDs(s.ConfigOptions); fmt.Sprint(got) != fmt.Sprint(wantNew) {
				t.Errorf("session/new boolean options %v, want %v", got, wantNew)
			}
			var r acp.SetConfigOptionResponse
			err := e.call(acp.MethodSessionSetConfigOption, acp.SetConfigOptionRequest{SessionID: s.SessionID, ConfigID: mapping.ConfigShowThoughts,
				Type: acp.ConfigBoolean, Value: json.RawMessage("false")}, &r)
			if err != nil {
				t.Fatal(err)
			}
			if got := booleanIDs(r.ConfigOptions); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("set_config_option answered boolean options %v, want %v", got, tt.want)
			}
			if len(r.ConfigOptions) != len(s.ConfigOptions) {
				t.Errorf("set_config_option answered %d options, session/new %d: want the full list", len(r.ConfigOptions), len(s.ConfigOptions))
			}
			for _, u := range e.updates() {
				if c, ok := u.(*acp.ConfigOptionUpdate); ok {
					if got := booleanIDs(c.ConfigOptions); fmt.Sprint(got) != fmt.Sprint(tt.want) {
						t.Errorf("config_option_update boolean options %v, want %v", got, tt.want)
					}
				}
			}
			// A wrong value type is the client's error.
			err = e.call(acp.MethodSessionSetConfigOption, acp.SetConfigOptionRequest{SessionID: s.SessionID, ConfigID: mapping.ConfigAutoCompact,
				Type: acp.ConfigBoolean, Value: json.RawMessage(`"off"`)}, &r)
			if rpcCode(err) != acp.CodeInvalidParams {
				t.Errorf("a string for a boolean option: err %v, want invalid params", err)
			}
			err = e.call(acp.MethodSessionSetConfigOption, acp.SetConfigOptionRequest{SessionID: s.SessionID, ConfigID: mapping.ConfigMode,
				Type: acp.ConfigBoolean, Value: json.RawMessage(`true`)}, &r)
			if rpcCode(err) != acp.CodeInvalidParams {
				t.Errorf("a boolean for a select option: err %v, want invalid params", err)
			}
		})
	}
}

// show_thoughts off keeps the model's reasoning out of the thread (it is
// still logged and sent back to the model); on again, it shows.
func TestShowThoughtsSwitch(t *testing.T) {
	e, ag := newEditorAgent(t, Options{Model: script(t, `{"responses":[
		{"parts":[{"thought":"hidden reasoning"},{"text":"first"}]},
		{"parts":[{"thought":"shown reasoning"},{"text":"second"}]}]}`)})
	sid := e.newSessionCaps(t.TempDir(), takesBooleans)
	set := func(on bool) {
		var r acp.SetConfigOptionResponse
		if err := e.call(acp.MethodSessionSetConfigOption, acp.SetConfigOptionRequest{SessionID: sid, ConfigID: mapping.ConfigShowThoughts,
			Type: acp.ConfigBoolean, Value: json.RawMessage(fmt.Sprint(on))}, &r); err != nil {
			t.Fatal(err)
		}
	}
	thoughts := func() string {
		var b strings.Builder
		for _, u := range e.updates() {
			if c, ok := u.(*acp.AgentThoughtChunk); ok {
				b.WriteString(c.Content.Text)
			}
		}
		return b.String()
	}
	set(false)
	if _, err := e.prompt(sid, "one"); err != nil {
		t.Fatal(err)
	}
	set(true)
	if _, err := e.prompt(sid, "two"); err != nil {
		t.Fatal(err)
	}
	if got := thoughts(); got != "shown reasoning" {
		t.Errorf("thought chunks %q, want only the one after the switch went back on", got)
	}
	if h := ag.liveSession(t, sid).history(); !strings.Contains(fmt.Sprint(h), "hidden reasoning") {
		t.Errorf("the hidden reasoning left the model's context: %v", h)
	}
}

// auto_compact off: a session past the threshold is not compacted by
// itself (the same session with it on is: TestAutoCompactionBeforeTheWindowFills).
func TestAutoCompactSwitchOff(t *testing.T) {
	const window = 6000
	w := &windowedModel{window: 1 << 30} // the endpoint never refuses
	ep := windowedEndpoint(t, w)
	reg := registry.New()
	fs.Register(reg)
	e := newEditor(t, Options{Models: []ModelChoice{{ID: "m", Provider: ep.provider(window)}}, Registry: reg, UserInstructionsDir: "-"})
	sid := e.newSessionCaps(workspace(t, 4, 1500), takesBooleans)
	var r acp.SetConfigOptionResponse
	if err := e.call(acp.MethodSessionSetConfigOption, acp.SetConfigOptionRequest{SessionID: sid, ConfigID: mapping.ConfigAutoCompact,
		Type: acp.ConfigBoolean, Value: json.RawMessage("false")}, &r); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if _, err := e.prompt(sid, fmt.Sprintf("Question %d: what is in file #%d", i, i%4)); err != nil {
			t.Fatal(err)
		}
	}
	over := false
	for i, r := range ep.requests() {
		if isSummaryRequest(r) {
			t.Fatalf("request %d is a summary: the session compacted with auto_compact off", i)
		}
		over = over || w.reported[i] > window
	}
	if !over {
		t.Fatal("the session never passed the window: the test shows nothing")
	}
}
