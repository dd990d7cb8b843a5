package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// turnResult is what one prompt turn left on the wire.
type turnResult struct {
	session string
	reqSeq  int  // the prompt request's entry
	respSeq int  // its response's entry; 0 when none came
	resp    *Msg // nil when none came
	err     error
}

// prompt sends a prompt and waits for its answer; the request id and
// response are located in the trace for the window checks.
func (r *run) prompt(ctx context.Context, session, text string) *turnResult {
	tr := &turnResult{session: session}
	req, err := r.c.request("session/prompt", textPrompt(session, text), false)
	if err != nil {
		tr.err = err
		return tr
	}
	tr.reqSeq = req.seq
	tr.resp, tr.err = r.c.await(ctx, req.ch, r.s.cfg.TurnTimeout)
	tr.respSeq = r.responseSeq(req.id)
	return tr
}

// responseSeq finds the entry answering client request id.
func (r *run) responseSeq(id string) int {
	for _, e := range r.c.trace.Entries() {
		if e.Dir == acpschema.FromAgent && e.Msg != nil && e.Msg.IsResponse() && idKey(e.Msg.ID) == id {
			return e.Seq
		}
	}
	return 0
}

// updatesOf returns the session's updates among entries with from < Seq < to
// (to 0: to the end).
func updatesOf(es []*Entry, session string, from, to int) []*Entry {
	var out []*Entry
	for _, e := range es {
		if e.Seq <= from || (to > 0 && e.Seq >= to) {
			continue
		}
		if u, ok := sessionUpdate(e); ok && u.SessionID == session {
			out = append(out, e)
		}
	}
	return out
}

// turns is the main run with the configured capabilities: a tool turn, its
// replay through session/load, and a cancelled turn.
func (s *suite) turns(ctx context.Context) {
	const name = "turn"
	ids := []string{CheckPromptTurn, CheckUpdatesBefore, CheckNoUserEcho, CheckLoadReplay, CheckFork, CheckCancel, CheckCancelQuiet, CheckAfterCancel}
	r, ok := s.startFor(ctx, name, s.cfg.Caps, ids...)
	if !ok {
		return
	}
	defer r.end()
	if m, err := r.initialize(ctx, 1); err != nil || m.Error != nil {
		for _, id := range ids {
			s.skip(id, "initialize failed")
		}
		return
	}
	sid, _, err := r.newSession(ctx)
	if err != nil {
		for _, id := range ids {
			s.skip(id, "session/new failed: %v", err)
		}
		return
	}
	live := r.prompt(ctx, sid, s.cfg.Prompt)
	ok = r.checkTurn(ctx, live)
	if !ok {
		s.skip(CheckLoadReplay, "the live turn failed")
	} else if !capTrue(s.agentCaps, "loadSession") {
		s.skip(CheckLoadReplay, "the agent does not advertise loadSession")
	} else {
		r.checkLoad(ctx, live, s.cfg.Prompt)
	}
	switch {
	case !capObject(s.agentCaps, "sessionCapabilities", "fork"):
		s.skip(CheckFork, "the agent does not advertise sessionCapabilities.fork")
	case !ok:
		s.skip(CheckFork, "the live turn failed")
	default:
		r.checkFork(ctx, live, s.cfg.Prompt)
	}
	r.cancelTurn(ctx)
}

// checkFork forks the session of the live turn. The fork must answer like
// session/new with a new id; when the agent can load sessions, the fork's
// replay must carry the original's conversation, and the original's replay
// must be what it was (nothing of the fork in it).
func (r *run) checkFork(ctx context.Context, live *turnResult, prompt string) {
	s := r.s
	// The original's conversation: as its load replayed it, else as the
	// live turn showed it.
	want := r.replayed
	if want == "" {
		want = buildView(updatesOf(r.c.trace.Entries(), live.session, live.reqSeq, live.respSeq)).agent.String()
	}
	m, err := r.c.call(ctx, "session/fork", map[string]any{"sessionId": live.session, "cwd": s.cfg.Workspace, "mcpServers": []any{}}, s.cfg.TurnTimeout)
	switch {
	case err != nil:
		s.fail(CheckFork, r.name, nil, "session/fork: %v; %s", err, r.stderrTail())
		return
	case m.Error != nil:
		s.fail(CheckFork, r.name, r.entryOf(m), "session/fork of a session with a finished turn answered an error")
		return
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Result, &res)
	if res.SessionID == "" || res.SessionID == live.session {
		s.fail(CheckFork, r.name, r.entryOf(m), "session/fork answered session id %q: a fork is a new session", res.SessionID)
		return
	}
	if !capTrue(s.agentCaps, "loadSession") {
		s.pass(CheckFork, "new session %s (no loadSession: its history cannot be observed)", res.SessionID)
		return
	}
	for _, c := range []struct{ sid, what string }{{res.SessionID, "the fork"}, {live.session, "the original, after the fork"}} {
		resp, reqSeq, respSeq, err := r.load(ctx, c.sid)
		switch {
		case err != nil:
			s.fail(CheckFork, r.name, nil, "session/load of %s: %v", c.what, err)
			return
		case resp.Error != nil:
			s.fail(CheckFork, r.name, r.entryOf(resp), "session/load of %s answered an error", c.what)
			return
		}
		got := buildView(updatesOf(r.c.trace.Entries(), c.sid, reqSeq, respSeq))
		if got.user.String() != prompt || got.agent.String() != want {
			s.fail(CheckFork, r.name, r.entryOf(resp), "the replay of %s is not the original conversation:\n  user:  %s (want %s)\n  agent: %s (want %s)",
				c.what, short(got.user.String(), 200), short(prompt, 200), short(got.agent.String(), 200), short(want, 200))
			return
		}
	}
	s.pass(CheckFork, "fork %s replays the original's conversation; the original is unchanged", res.SessionID)
}

// capObject reports whether caps[group][name] is a capability object ({}):
// present and not null.
func capObject(caps map[string]json.RawMessage, group, name string) bool {
	var g map[string]json.RawMessage
	if json.Unmarshal(caps[group], &g) != nil {
		return false
	}
	v, ok := g[name]
	return ok && string(v) != "null"
}

func capTrue(caps map[string]json.RawMessage, name string) bool {
	var b bool
	return json.Unmarshal(caps[name], &b) == nil && b
}

// checkTurn checks one completed turn: a single result with a stopReason,
// no user echo, no turn updates after the response.
func (r *run) checkTurn(ctx context.Context, tr *turnResult) bool {
	s := r.s
	switch {
	case tr.err != nil:
		s.fail(CheckPromptTurn, r.name, nil, "session/prompt: %v; %s", tr.err, r.stderrTail())
		s.skip(CheckUpdatesBefore, "the turn was not answered")
		return false
	case tr.resp.Error != nil:
		s.fail(CheckPromptTurn, r.name, r.entryOf(tr.resp), "session/prompt answered an error")
		s.skip(CheckUpdatesBefore, "the turn failed")
		return false
	}
	var res struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(tr.resp.Result, &res)
	if res.StopReason == "" {
		s.fail(CheckPromptTurn, r.name, r.entryOf(tr.resp), "the result has no stopReason")
		return false
	}
	es := r.c.trace.Entries()
	n := len(updatesOf(es, tr.session, tr.reqSeq, tr.respSeq))
	s.pass(CheckPromptTurn, "%s: stopReason %q after %d updates", r.name, res.StopReason, n)
	for _, e := range updatesOf(es, tr.session, tr.reqSeq, tr.respSeq) {
		if u, _ := sessionUpdate(e); u.kind == "user_message_chunk" {
			s.fail(CheckNoUserEcho, r.name, e, "user_message_chunk during a live turn: Zed already shows the prompt and may show it twice")
		}
	}
	s.pass(CheckNoUserEcho, "%s: no echo", r.name)
	if open := openCards(es[:tr.respSeq], tr.session); len(open) > 0 && res.StopReason != "cancelled" {
		for id := range open {
			s.fail(CheckCardsFinished, r.name, r.entryOf(tr.resp), "tool call %q is still pending or in progress when the turn ends %q: Zed keeps its spinner", id, res.StopReason)
		}
	} else {
		s.pass(CheckCardsFinished, "%s: every card final", r.name)
	}
	r.c.quiet(ctx, s.cfg.Grace, s.cfg.Timeout)
	late := 0
	for _, e := range updatesOf(r.c.trace.Entries(), tr.session, tr.respSeq, 0) {
		if u, _ := sessionUpdate(e); !sessionLevel(u.kind) {
			s.fail(CheckUpdatesBefore, r.name, e, "%s after the turn's response (entry #%d)", u.kind, tr.respSeq)
			late++
		}
	}
	if late == 0 {
		s.pass(CheckUpdatesBefore, "%s: none after the response", r.name)
	}
	return true
}

// cancelTurn starts a turn in a new session, cancels it once it is under
// way, and checks the answer and the quiet after it.
func (r *run) cancelTurn(ctx context.Context) {
	s := r.s
	sid, _, err := r.newSession(ctx)
	if err != nil {
		for _, id := range []string{CheckCancel, CheckCancelQuiet, CheckAfterCancel} {
			s.skip(id, "session/new failed: %v", err)
		}
		return
	}
	r.ed.hold(sid) // permission requests of this turn wait for the cancel
	req, err := r.c.request("session/prompt", textPrompt(sid, s.cfg.CancelPrompt), false)
	if err != nil {
		s.fail(CheckCancel, r.name, nil, "session/prompt: %v", err)
		return
	}
	id, ch, reqSeq := req.id, req.ch, req.seq
	// Cancel once the turn shows life (an update or a request), or after
	// CancelAfter if it stays silent.
	r.c.waitFor(ctx, s.cfg.CancelAfter, func(es []*Entry) bool {
		for _, e := range es[reqSeq:] {
			if e.Dir != acpschema.FromAgent || e.Msg == nil {
				continue
			}
			if e.Msg.IsRequest() || e.Msg.IsResponse() && idKey(e.Msg.ID) == id {
				return true
			}
			if u, ok := sessionUpdate(e); ok && u.SessionID == sid && !sessionLevel(u.kind) {
				return true
			}
		}
		return false
	})
	if seq := r.responseSeq(id); seq > 0 {
		r.ed.release(sid)
		s.skip(CheckCancel, "the turn ended (entry #%d) before the suite could cancel it; use a longer -cancel-prompt", seq)
		s.skip(CheckCancelQuiet, "the turn was not cancelled")
		s.skip(CheckAfterCancel, "the turn was not cancelled")
		return
	}
	ce, err := r.c.sendEntry(mustJSON(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}}), false)
	r.ed.release(sid)
	if err != nil {
		s.fail(CheckCancel, r.name, nil, "session/cancel could not be sent: %v; %s", err, r.stderrTail())
		return
	}
	cancelSeq := ce.Seq
	resp, err := r.c.await(ctx, ch, s.cfg.TurnTimeout)
	if err != nil {
		s.fail(CheckCancel, r.name, nil, "no answer to the cancelled prompt: %v; %s", err, r.stderrTail())
		s.skip(CheckCancelQuiet, "the cancelled turn never ended")
		s.skip(CheckAfterCancel, "the cancelled turn never ended")
		return
	}
	respSeq := r.responseSeq(id)
	r.c.quiet(ctx, s.cfg.Grace, s.cfg.Timeout)
	es := r.c.trace.Entries()
	answers := 0
	for _, e := range es[reqSeq:] {
		if e.Dir == acpschema.FromAgent && e.Msg != nil && e.Msg.IsResponse() && idKey(e.Msg.ID) == id {
			answers++
		}
	}
	var res struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(resp.Result, &res)
	switch {
	case resp.Error != nil:
		s.fail(CheckCancel, r.name, r.entryOf(resp), "the cancelled prompt answered an error; it must answer stopReason \"cancelled\"")
	case res.StopReason != "cancelled":
		s.fail(CheckCancel, r.name, r.entryOf(resp), "stopReason %q after session/cancel (entry #%d), want \"cancelled\"", res.StopReason, cancelSeq)
	case answers != 1:
		s.fail(CheckCancel, r.name, r.entryOf(resp), "the prompt was answered %d times", answers)
	default:
		s.pass(CheckCancel, "stopReason \"cancelled\" %v after session/cancel", es[respSeq-1].At-es[cancelSeq-1].At)
	}

	// After the response: only the final updates of cards left unfinished.
	open := openCards(es[:respSeq], sid)
	bad := 0
	for _, e := range updatesOf(es, sid, respSeq, 0) {
		u, _ := sessionUpdate(e)
		switch {
		case sessionLevel(u.kind):
		case u.kind == "tool_call_update" && open[u.str("toolCallId")]:
			if statusRank(u.str("status")) == 2 {
				delete(open, u.str("toolCallId"))
			}
		default:
			bad++
			s.fail(CheckCancelQuiet, r.name, e, "%s after the cancelled turn's response (entry #%d); only final updates of its unfinished tool calls may follow", u.kind, respSeq)
		}
	}
	if bad == 0 {
		s.pass(CheckCancelQuiet, "nothing but final card updates after the response")
	}

	after := r.prompt(ctx, sid, "Thanks, that is enough. Reply with one word.")
	switch {
	case after.err != nil:
		s.fail(CheckAfterCancel, r.name, nil, "a prompt after the cancel: %v", after.err)
	case after.resp.Error != nil:
		s.fail(CheckAfterCancel, r.name, r.entryOf(after.resp), "a prompt after the cancel answered an error")
	default:
		s.pass(CheckAfterCancel, "answered %s", short(string(after.resp.Result), 80))
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values are marshalled here
	}
	return b
}

// openCards returns the tool calls of session not yet completed or failed.
func openCards(es []*Entry, session string) map[string]bool {
	open := map[string]bool{}
	for _, e := range updatesOf(es, session, 0, 0) {
		u, _ := sessionUpdate(e)
		id := u.str("toolCallId")
		switch u.kind {
		case "tool_call":
			open[id] = statusRank(u.str("status")) < 2
		case "tool_call_update":
			if statusRank(u.str("status")) == 2 {
				delete(open, id)
			}
		}
	}
	for id, o := range open {
		if !o {
			delete(open, id)
		}
	}
	return open
}

// bare repeats the main prompt with a client that advertises nothing, so
// capability gating is tested whatever the main run advertised.
func (s *suite) bare(ctx context.Context) {
	const name = "bare-client"
	r, ok := s.startFor(ctx, name, Caps{}, CheckCapabilities)
	if !ok {
		return
	}
	defer r.end()
	if m, err := r.initialize(ctx, 1); err != nil || m.Error != nil {
		return
	}
	sid, _, err := r.newSession(ctx)
	if err != nil {
		return
	}
	r.checkTurn(ctx, r.prompt(ctx, sid, s.cfg.Prompt))
}

// transcriptView is what a client shows of a session after a series of
// updates: the texts and each tool call's final card.
type transcriptView struct {
	user, agent, thought strings.Builder
	order                []string
	cards                map[string]*cardView
}

type cardView struct {
	fields   map[string]json.RawMessage
	terminal strings.Builder
	exit     json.RawMessage
}

// compared are the card fields a replay must reproduce.
var compared = []string{"title", "kind", "status", "content", "locations"}

func buildView(es []*Entry) *transcriptView {
	v := &transcriptView{cards: map[string]*cardView{}}
	for _, e := range es {
		u, ok := sessionUpdate(e)
		if !ok {
			continue
		}
		var content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(u.fields["content"], &content)
		switch u.kind {
		case "user_message_chunk":
			v.user.WriteString(content.Text)
		case "agent_message_chunk":
			v.agent.WriteString(content.Text)
		case "agent_thought_chunk":
			v.thought.WriteString(content.Text)
		case "tool_call", "tool_call_update":
			id := u.str("toolCallId")
			c := v.cards[id]
			if c == nil {
				c = &cardView{fields: map[string]json.RawMessage{}}
				v.cards[id] = c
				v.order = append(v.order, id)
			}
			if u.kind == "tool_call" {
				// Zed applies a repeated tool_call as an update whose
				// missing status means pending.
				c.fields["status"] = json.RawMessage(`"pending"`)
			}
			for k, val := range u.fields {
				if k != "_meta" && k != "sessionUpdate" {
					c.fields[k] = val
				}
			}
			meta := objField(u.fields["_meta"])
			var out struct {
				Data string `json:"data"`
			}
			for _, k := range []string{"terminal_output", "terminal_output_delta"} { // both append
				out.Data = ""
				if json.Unmarshal(meta[k], &out) == nil {
					c.terminal.WriteString(out.Data)
				}
			}
			if x, ok := meta["terminal_exit"]; ok {
				c.exit = x
			}
		}
	}
	return v
}

// canonical re-encodes JSON so equal values compare equal as strings.
func canonical(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// load sends session/load for sid and waits for the answer and the quiet
// after it; reqSeq and respSeq bracket the replay in the trace.
func (r *run) load(ctx context.Context, sid string) (resp *Msg, reqSeq, respSeq int, err error) {
	s := r.s
	req, err := r.c.request("session/load", map[string]any{"sessionId": sid, "cwd": s.cfg.Workspace, "mcpServers": []any{}}, false)
	if err != nil {
		return nil, 0, 0, err
	}
	resp, err = r.c.await(ctx, req.ch, s.cfg.TurnTimeout)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w; %s", err, r.stderrTail())
	}
	respSeq = r.responseSeq(req.id)
	r.c.quiet(ctx, s.cfg.Grace, s.cfg.Timeout)
	return resp, req.seq, respSeq, nil
}

// checkLoad loads the session of the live turn and compares the replay.
// The session is still live on this connection, as the official kit loads
// it (ACP-LOAD-001..003): an agent must replay it all the same.
func (r *run) checkLoad(ctx context.Context, live *turnResult, prompt string) {
	s := r.s
	resp, reqSeq, respSeq, err := r.load(ctx, live.session)
	if err != nil {
		s.fail(CheckLoadReplay, r.name, nil, "session/load: %v", err)
		return
	}
	if resp.Error != nil {
		s.fail(CheckLoadReplay, r.name, r.entryOf(resp), "session/load of the session live on this connection answered an error: it must replay it and answer")
		return
	}
	if len(objField(resp.Result)) == 0 && strings.TrimSpace(string(resp.Result)) != "{}" {
		s.fail(CheckLoadReplay, r.name, r.entryOf(resp), "session/load answered %s: a LoadSessionResponse is an object", short(string(resp.Result), 80))
		return
	}
	es := r.c.trace.Entries()
	before := len(s.o(CheckLoadReplay).offences)
	for _, e := range updatesOf(es, live.session, respSeq, 0) {
		if u, _ := sessionUpdate(e); !sessionLevel(u.kind) {
			s.fail(CheckLoadReplay, r.name, e, "replayed %s after the session/load response: the replay must come first", u.kind)
		}
	}
	liveView := buildView(updatesOf(es, live.session, live.reqSeq, reqSeq))
	replay := updatesOf(es, live.session, reqSeq, respSeq)
	got := buildView(replay)
	r.replayed = got.agent.String()
	lastReplay := r.entryOf(resp)
	if len(replay) > 0 {
		lastReplay = replay[len(replay)-1]
	}
	diff := func(what, want, have string) {
		s.fail(CheckLoadReplay, r.name, lastReplay, "replay differs from the live turn in %s:\n  live:   %s\n  replay: %s", what, short(want, 300), short(have, 300))
	}
	if got.user.String() != prompt {
		diff("the user message (replay it as user_message_chunk)", prompt, got.user.String())
	}
	if a, b := liveView.agent.String(), got.agent.String(); a != b {
		diff("the agent message", a, b)
	}
	if a, b := liveView.thought.String(), got.thought.String(); a != b {
		diff("the thoughts", a, b)
	}
	if a, b := strings.Join(liveView.order, ","), strings.Join(got.order, ","); a != b {
		diff("the tool calls", a, b)
	}
	ids := append([]string(nil), liveView.order...)
	sort.Strings(ids)
	for _, tid := range ids {
		lc, rc := liveView.cards[tid], got.cards[tid]
		if rc == nil {
			continue // reported with the order
		}
		for _, f := range compared {
			if a, b := canonical(lc.fields[f]), canonical(rc.fields[f]); a != b {
				diff(fmt.Sprintf("tool call %q field %s", tid, f), a, b)
			}
		}
		if a, b := lc.terminal.String(), rc.terminal.String(); a != b {
			diff(fmt.Sprintf("tool call %q terminal output", tid), a, b)
		}
		if a, b := canonical(lc.exit), canonical(rc.exit); a != b {
			diff(fmt.Sprintf("tool call %q terminal_exit", tid), a, b)
		}
	}
	if len(s.o(CheckLoadReplay).offences) == before {
		s.pass(CheckLoadReplay, "%d updates replayed before the response, %d tool calls identical to the live turn", len(replay), len(ids))
	}
}
