package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// Scenarios in ACP v2. A scenario's client script is written in v1; V2Script
// re-expresses it in the v2 draft (initialize for version 2 with v2's
// fields, session/load as a resume replaying from the start, set_mode as
// the mode config option, authenticate as auth/login) and, since v2's
// session/prompt answers at once, waits after each prompt the script does
// not send async, and after each cancel, until every accepted prompt's
// work has ended (an idle state_update each). The agent's v2 output is compared with the
// scenario's "agent.v2" section, and every message is checked against the
// v2 schema when one is given. A scenario whose initialize asks for
// another version than 1 is about version negotiation and has no v2 run.

// V2Golden is the archive section of a scenario's v2 output.
const V2Golden = "agent.v2"

// V2Script is script in v2, or ok false for a scenario with no v2 run.
func V2Script(script []string) (out []string, ok bool) {
	for i, line := range script {
		if strings.HasPrefix(line, "!") {
			out = append(out, line)
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			out = append(out, line)
			continue
		}
		p, _ := m["params"].(map[string]any)
		async := i > 0 && script[i-1] == "!async"
		switch m["method"] {
		case "initialize":
			if v, _ := p["protocolVersion"].(float64); v != 1 {
				return nil, false
			}
			info, _ := p["clientInfo"].(map[string]any)
			if info == nil {
				info = map[string]any{"name": "acp-conform", "version": "1"}
			}
			m["params"] = map[string]any{"protocolVersion": 2, "info": info, "capabilities": map[string]any{}}
		case "session/load":
			m["method"] = "session/resume"
			p["replayFrom"] = map[string]any{"type": "start"}
		case "session/set_mode":
			m["method"] = "session/set_config_option"
			m["params"] = map[string]any{"sessionId": p["sessionId"], "configId": "mode", "type": "id", "value": p["modeId"]}
		case "authenticate":
			m["method"] = "auth/login"
		}
		b, _ := json.Marshal(m)
		out = append(out, string(b))
		// A v1 prompt's answer comes at its turn's end; in v2 the idle
		// state does. A cancel's end, likewise.
		if m["method"] == "session/prompt" && m["id"] != nil && !async || m["method"] == "session/cancel" {
			out = append(out, "!wait idle")
		}
	}
	return out, true
}

// idleAll reports whether every prompt the agent accepted (answered with
// a result) has ended: as many idle state_updates came as accepted prompts.
func idleAll(es []*Entry) bool {
	prompts := map[string]bool{}
	accepted, idle := 0, 0
	for _, e := range es {
		if e.Msg == nil {
			continue
		}
		switch {
		case e.Dir == acpschema.ToAgent && e.Msg.IsRequest() && e.Msg.Method == "session/prompt":
			prompts[string(e.Msg.ID)] = true
		case e.Dir == acpschema.FromAgent && e.Msg.IsResponse() && prompts[string(e.Msg.ID)] && len(e.Msg.Result) > 0:
			accepted++
		case e.Dir == acpschema.FromAgent && e.Msg.Method == "session/update":
			var n struct {
				Update struct {
					Kind  string `json:"sessionUpdate"`
					State string `json:"state"`
				} `json:"update"`
			}
			if json.Unmarshal(e.Msg.Params, &n) == nil && n.Update.Kind == "state_update" && n.Update.State == "idle" {
				idle++
			}
		}
	}
	return idle >= accepted
}

// messageIDs are the ids a v2 agent gives user messages: random, so a
// golden names them by order.
var messageIDs = regexp.MustCompile(`"msg_[0-9a-f]{24}"`)

// RunScenarioV2 replays a scenario in ACP v2 (see V2Script); a nil result
// means the scenario has no v2 run. schema is the v2 draft's, or nil to
// leave the messages unchecked.
func RunScenarioV2(ctx context.Context, name string, a *Archive, argv []string, schema *acpschema.Schema, update bool) (*ScenarioResult, error) {
	script, ok := a.File("client")
	if !ok {
		return nil, fmt.Errorf("%s: no client section", name)
	}
	v2, ok := V2Script(lines(script))
	if !ok {
		return nil, nil
	}
	got, es, err := replay(ctx, name+" (v2)", a, argv, func(args []string) Launcher { return Command(args, nil) }, Caps{}, v2)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	got = messageIDs.ReplaceAllStringFunc(got, func(id string) string {
		if ids[id] == "" {
			ids[id] = fmt.Sprintf(`"$MESSAGE_ID%d"`, len(ids)+1)
		}
		return ids[id]
	})
	res := &ScenarioResult{Name: name + " (v2)", Got: got}
	res.compare(a, V2Golden, update)
	if schema != nil {
		check := acpschema.NewChecker(schema)
		for _, e := range es {
			// The client's lines are checked too, for the responses to
			// know their requests; a scenario's bad input is on purpose.
			if err := check.Check(e.Dir, []byte(e.Line)); err != nil && e.Msg != nil && e.Dir == acpschema.FromAgent {
				res.Offences = append(res.Offences, Offence{Run: res.Name, Seq: e.Seq, Dir: e.Dir.String(), Message: e.Line,
					Why: "not valid against the v2 schema: " + err.Error()})
			}
		}
	}
	return res, nil
}
