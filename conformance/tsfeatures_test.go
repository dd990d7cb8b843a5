package conformance_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance"
	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// featureModel is an OpenAI-compatible endpoint whose answers a test
// scripts with answer, plus a control API the TypeScript client uses to
// line its requests up with the model's: POST /control/wait/NAME blocks
// until NAME has fired, POST /control/fire/NAME fires it. The model side
// fires and waits the same events (fire, wait), so "the steered message
// arrived while the model was thinking" is a fact of the test, not a
// matter of timing. Every request body and its headers are kept.
type featureModel struct {
	t      *testing.T
	answer func(m *featureModel, r *http.Request, body map[string]any) string // an SSE body
	mu     sync.Mutex
	events map[string]chan struct{}
	reqs   []map[string]any
	auths  []string // the Authorization header of each request
}

func (m *featureModel) event(name string) chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = map[string]chan struct{}{}
	}
	ch := m.events[name]
	if ch == nil {
		ch = make(chan struct{})
		m.events[name] = ch
	}
	return ch
}

func (m *featureModel) fire(name string) {
	ch := m.event(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// wait blocks until name fired; a test whose client never fires fails
// rather than hangs.
func (m *featureModel) wait(name string) bool {
	select {
	case <-m.event(name):
		return true
	case <-time.After(60 * time.Second):
		m.t.Errorf("event %s never fired", name)
		return false
	}
}

func (m *featureModel) requests() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.reqs...)
}

func (m *featureModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if verb, name, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/control/"), "/"); ok && strings.HasPrefix(r.URL.Path, "/control/") {
		switch verb {
		case "fire":
			m.fire(name)
		case "wait":
			if !m.wait(name) {
				http.Error(w, "never fired", http.StatusGatewayTimeout)
				return
			}
		default:
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "ok")
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, body)
	m.auths = append(m.auths, r.Header.Get("Authorization"))
	m.mu.Unlock()
	out := m.answer(m, r, body)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, out+"data: [DONE]\n\n")
}

// sseText and sseCall are one streamed answer: text, or one tool call.
func sseText(text string) string {
	d, _ := json.Marshal(map[string]any{"role": "assistant", "content": text})
	return sseChunk(string(d), "stop")
}

func sseCall(id, name string, args any) string {
	a, _ := json.Marshal(args)
	d, _ := json.Marshal(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
		"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": string(a)}}}})
	return sseChunk(string(d), "") + sseChunk(`{}`, "tool_calls")
}

func sseChunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"mock-1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}` + "\n\n"
}

// lastMessage is the last message of a model request: its role and text.
func lastMessage(body map[string]any) (string, string) {
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		return "", ""
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	role, _ := last["role"].(string)
	return role, fmt.Sprint(last["content"])
}

// tsFeatures runs scenarios of features.mjs against the real binary.
type tsFeatures struct {
	*tsClient
	// schemas are the SDK's, and the newer schema beside the checkout
	// (with its unstable set) when there is one: every message is checked
	// against each.
	schemas []*acpschema.Schema
}

func newTSFeatures(t *testing.T) *tsFeatures {
	t.Helper()
	c := newTSClient(t)
	if c.schema.Unstable == nil {
		t.Fatal("the SDK's schema comes without its unstable set")
	}
	f := &tsFeatures{tsClient: c, schemas: []*acpschema.Schema{c.schema}}
	if d, err := acpschema.Newer(); err != nil {
		t.Fatal(err)
	} else if d != "" {
		newer, err := acpschema.Load(filepath.Join(d, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		f.schemas = append(f.schemas, newer)
	}
	return f
}

// tsOut is what features.mjs reports.
type tsOut struct {
	tsReport
	Sessions     map[string][]map[string]any `json:"sessions"`
	Marks        map[string]int              `json:"marks"`
	Elicitations []map[string]any            `json:"elicitations"`
	Completions  []map[string]any            `json:"completions"`
}

// run runs one scenario with the bridge's state in stateDir (a fresh one
// when ""), checks every message of it against the schemas, and returns
// what the client saw. bridgeArgs go to the bridge; env adds to its
// environment.
func (f *tsFeatures) run(srv *httptest.Server, stateDir string, scenario map[string]any, bridgeArgs []string, env ...string) *tsOut {
	t := f.t
	t.Helper()
	scenario["control"] = srv.URL + "/control"
	if _, ok := scenario["cwd"]; !ok {
		scenario["cwd"] = t.TempDir()
	}
	if stateDir != "" {
		env = append(env, "ACP_BRIDGE_STATE_DIR="+stateDir)
	}
	var seen tsOut
	f.tsClient.run(tsRun{Script: "features.mjs", Name: fmt.Sprint(scenario["name"]), Scenario: scenario,
		Args: bridgeArgs, Env: env, Schemas: f.schemas}, &seen)
	return &seen
}

// modelArgs points the bridge at srv.
func modelArgs(srv *httptest.Server) []string {
	return []string{"--base-url", srv.URL + "/v1", "--model", "mock-1", "--api-key-env", "MOCK_KEY", "--retries", "0"}
}

func (s *tsOut) updates(sid string, from int) []map[string]any {
	us := s.Sessions[sid]
	if from > len(us) {
		return nil
	}
	return us[from:]
}

// TestTypeScriptSteering: through the real binary, with the official SDK
// as the client, a message steered while the model works on a turn joins
// that turn at its next model request, after the tool result; the prompt
// ends once, end_turn; with no turn running the answer is promptRequired
// as claude-agent-acp and codex-acp give it; a load replays the steered
// message where it joined.
func TestTypeScriptSteering(t *testing.T) {
	f := newTSFeatures(t)
	conformance.SkipUnlessConfined(t, f.bin)
	const prompt, steer = "list the files (steering)", "STEERED: count them too"
	model := &featureModel{t: t, answer: func(m *featureModel, _ *http.Request, body map[string]any) string {
		role, content := lastMessage(body)
		switch {
		case role == "user" && content == prompt:
			m.fire("first-request")
			m.wait("steered") // the client steers while the model thinks
			return sseCall("call_ls", "bash", map[string]string{"command": "printf 'one\\ntwo\\n'"})
		case role == "user" && strings.HasPrefix(content, "STEERED"):
			return sseText("Two files, counted.")
		}
		return sseText("Unexpected: " + role + " " + content)
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	seen := f.run(srv, "", map[string]any{"name": "steering", "prompt": prompt, "steer": steer}, modelArgs(srv), "MOCK_KEY=sk-ts")

	var init map[string]any
	json.Unmarshal([]byte(seen.Lines[1].Line), &init)
	if meta, _ := init["result"].(map[string]any)["_meta"].(map[string]any); fmt.Sprint(meta["steering"]) != "map[supported:true]" {
		t.Errorf("initialize _meta = %v, want steering.supported", meta)
	}
	idle := map[string]any{"outcome": "promptRequired", "reason": "noRunningTurn"}
	for _, name := range []string{"idleSteer", "lateSteer"} {
		if got := seen.Responses[name]; fmt.Sprint(got) != fmt.Sprint(idle) {
			t.Errorf("%s answered %v, want %v", name, got, idle)
		}
	}
	if got := seen.Responses["steer"]; got["outcome"] != "injected" {
		t.Errorf("steering during the turn answered %v (error %v)", got, seen.Errors["steer"])
	}
	if got := seen.Responses["prompt"]; got["stopReason"] != "end_turn" {
		t.Errorf("the steered turn ended %v", got)
	}
	reqs := model.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the call, then the answer)", len(reqs))
	}
	msgs, _ := reqs[1]["messages"].([]any)
	var tail []string
	for _, m := range msgs[len(msgs)-3:] {
		mm := m.(map[string]any)
		tail = append(tail, fmt.Sprint(mm["role"]))
	}
	if got := strings.Join(tail, ","); got != "assistant,tool,user" {
		t.Errorf("the second request ends %s, want the call, its result, then the steered message", got)
	}
	if _, c := lastMessage(reqs[1]); c != steer {
		t.Errorf("the second request's last message is %q, want the steered one", c)
	}

	// The load's replay: the steered message after the command's card and
	// before the answer it led to.
	var sid string
	for id := range seen.Sessions {
		sid = id
	}
	var order []string
	for _, u := range seen.updates(sid, seen.Marks["load"]) {
		switch u["sessionUpdate"] {
		case "user_message_chunk":
			order = append(order, "user:"+fmt.Sprint(u["content"].(map[string]any)["text"]))
		case "tool_call":
			order = append(order, "call")
		case "agent_message_chunk":
			order = append(order, "agent:"+fmt.Sprint(u["content"].(map[string]any)["text"]))
		}
	}
	want := "user:" + prompt + "|call|user:" + steer + "|agent:Two files, counted."
	if got := strings.Join(order, "|"); got != want {
		t.Errorf("the replay shows\n%s\nwant\n%s", got, want)
	}
}

// TestTypeScriptCancelRequest: through the real binary, with the official
// SDK as the client, $/cancel_request (the SDK's cancellationSignal) on a
// running prompt ends it cancelled, with the turn closed in the log, and
// the session takes the next prompt with the cancelled one in its
// context; a load cancelled as it starts answers -32800 or completes,
// and the next load replays the whole session either way.
func TestTypeScriptCancelRequest(t *testing.T) {
	f := newTSFeatures(t)
	const prompt = "think forever (cancel me)"
	model := &featureModel{t: t, answer: func(m *featureModel, r *http.Request, body map[string]any) string {
		if _, c := lastMessage(body); c == prompt {
			m.fire("first-request")
			<-r.Context().Done() // the bridge drops the request when the turn is cancelled
			return ""
		}
		return sseText("After the cancel.")
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	state := t.TempDir()
	seen := f.run(srv, state, map[string]any{"name": "cancelRequest", "prompt": prompt}, modelArgs(srv), "MOCK_KEY=sk-ts")

	if got := seen.Responses["prompt"]; got["stopReason"] != "cancelled" {
		t.Errorf("the cancelled prompt answered %v, error %v; want stopReason cancelled", got, seen.Errors["prompt"])
	}
	var cancels int
	for _, l := range seen.Lines {
		if l.Dir == "out" && strings.Contains(l.Line, `"$/cancel_request"`) {
			cancels++
		}
	}
	if cancels < 2 {
		t.Errorf("%d $/cancel_request sent, want the prompt's and the load's", cancels)
	}
	if got := seen.Responses["again"]; got["stopReason"] != "end_turn" {
		t.Errorf("the prompt after the cancel answered %v", got)
	}
	reqs := model.requests()
	all, _ := json.Marshal(reqs[len(reqs)-1]["messages"])
	if !strings.Contains(string(all), prompt) || !strings.Contains(string(all), "again after cancel") {
		t.Errorf("the next request lacks the cancelled prompt or the new one: %s", all)
	}
	if e, ok := seen.Errors["load"]; ok && e.Code != -32800 {
		t.Errorf("the cancelled load failed with %d %q, want -32800", e.Code, e.Message)
	}
	var sid string
	for id := range seen.Sessions {
		sid = id
	}
	var users int
	for _, u := range seen.updates(sid, seen.Marks["reload"]) {
		if u["sessionUpdate"] == "user_message_chunk" {
			users++
		}
	}
	if _, ok := seen.Responses["reload"]; !ok || users != 2 {
		t.Errorf("the load after the cancelled one: %v, %d user messages replayed, want 2", seen.Errors["reload"], users)
	}
	logs, _ := filepath.Glob(filepath.Join(state, "*", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
	logs = append(logs, more...)
	var stored string
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		stored += string(b)
	}
	if !strings.Contains(stored, `"stopReason":"cancelled"`) {
		t.Errorf("no cancelled turn/end in the stored logs %v", logs)
	}
}

// TestTypeScriptBooleanOptions: through the real binary, with the official
// SDK as the client, a client advertising session.configOptions.boolean
// gets the switches as boolean options, toggles show_thoughts off with
// session/set_config_option (which answers the full list) and sees no
// reasoning after; a client that did not ask gets no boolean option in any
// message (the kit's ACP-CONFIG-003), and sees the reasoning.
func TestTypeScriptBooleanOptions(t *testing.T) {
	f := newTSFeatures(t)
	model := &featureModel{t: t, answer: func(*featureModel, *http.Request, map[string]any) string {
		return sseChunk(`{"role":"assistant","reasoning_content":"Thinking it over."}`, "") + sseText("Answered.")
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	caps := map[string]any{"session": map[string]any{"configOptions": map[string]any{"boolean": map[string]any{}}}}
	in := f.run(srv, "", map[string]any{"name": "booleans", "toggle": true, "prompt": "think (booleans)", "clientCapabilities": caps}, modelArgs(srv), "MOCK_KEY=sk-ts")
	out := f.run(srv, "", map[string]any{"name": "booleans", "prompt": "think (no booleans)"}, modelArgs(srv), "MOCK_KEY=sk-ts")

	booleans := func(opts any) map[string]any {
		got := map[string]any{}
		list, _ := opts.([]any)
		for _, o := range list {
			m := o.(map[string]any)
			if m["type"] == "boolean" {
				got[fmt.Sprint(m["id"])] = m["currentValue"]
			}
		}
		return got
	}
	if got := booleans(in.Responses["new"]["configOptions"]); fmt.Sprint(got) != "map[auto_compact:true show_thoughts:true]" {
		t.Errorf("opt-in: session/new boolean options %v", got)
	}
	set := in.Responses["set"]
	if got := booleans(set["configOptions"]); fmt.Sprint(got) != "map[auto_compact:true show_thoughts:false]" {
		t.Errorf("opt-in: set_config_option answered %v (error %v)", set, in.Errors["set"])
	}
	if n, m := len(set["configOptions"].([]any)), len(in.Responses["new"]["configOptions"].([]any)); n != m {
		t.Errorf("opt-in: set_config_option answered %d options, session/new had %d: want the full list", n, m)
	}
	thoughts := func(s *tsOut) int {
		n := 0
		for _, us := range s.Sessions {
			for _, u := range us {
				if u["sessionUpdate"] == "agent_thought_chunk" {
					n++
				}
			}
		}
		return n
	}
	if n := thoughts(in); n != 0 {
		t.Errorf("opt-in: %d thought chunks with show_thoughts off", n)
	}
	if n := thoughts(out); n == 0 {
		t.Error("opt-out: no thought chunks: the reasoning should show by default")
	}
	for _, l := range out.Lines {
		if l.Dir == "in" && strings.Contains(l.Line, `"type":"boolean"`) {
			t.Errorf("opt-out: a boolean option went to a client that did not ask: %s", l.Line)
		}
	}
	if got := out.Responses["set"]; got == nil {
		t.Errorf("opt-out: set_config_option failed: %v", out.Errors["set"])
	}
}

// TestTypeScriptTitleAndArchive: through the real binary, with the
// official SDK's unstable methods, a session renamed and archived keeps
// both across a restart of the bridge: out of the default list, in
// archived "only" under its new name, loadable, and back in the default
// list once unarchived.
func TestTypeScriptTitleAndArchive(t *testing.T) {
	f := newTSFeatures(t)
	model := &featureModel{t: t, answer: func(*featureModel, *http.Request, map[string]any) string { return sseText("Noted.") }}
	srv := httptest.NewServer(model)
	defer srv.Close()
	const title = "Renamed from the editor"
	seen := f.run(srv, "", map[string]any{"name": "titles", "prompt": "an automatic title", "title": title}, modelArgs(srv), "MOCK_KEY=sk-ts")

	if caps := seen.Responses["caps0"]; caps["title"] == nil || caps["archive"] == nil {
		t.Errorf("sessionCapabilities %v: want title and archive advertised", caps)
	}
	if got := seen.Responses["setTitle"]["title"]; got != title {
		t.Errorf("set_title answered %v (error %v)", seen.Responses["setTitle"], seen.Errors["setTitle"])
	}
	sessions := func(name string) []map[string]any {
		var out []map[string]any
		list, _ := seen.Responses[name]["sessions"].([]any)
		for _, s := range list {
			out = append(out, s.(map[string]any))
		}
		return out
	}
	for _, name := range []string{"list0", "list1"} {
		if got := sessions(name); len(got) != 0 {
			t.Errorf("%s: the default list holds %v, want the archived session left out", name, got)
		}
	}
	for _, name := range []string{"listAll0", "listOnly1"} {
		got := sessions(name)
		if len(got) != 1 || got[0]["title"] != title || got[0]["archived"] != true {
			t.Errorf("%s: %v, want the session archived under its new title", name, got)
		}
	}
	if _, ok := seen.Responses["load"]; !ok {
		t.Errorf("loading the archived session after the restart: %v", seen.Errors["load"])
	}
	var sid string
	for id := range seen.Sessions {
		sid = id
	}
	var replayedTitle any
	for _, u := range seen.updates(sid, seen.Marks["load"]) {
		if u["sessionUpdate"] == "session_info_update" {
			replayedTitle = u["title"]
		}
	}
	if replayedTitle != title {
		t.Errorf("the load's last title %v, want %q", replayedTitle, title)
	}
	if got := sessions("list2"); len(got) != 1 || got[0]["title"] != title || got[0]["archived"] != nil {
		t.Errorf("after unarchive the default list is %v", got)
	}
}

// TestTypeScriptQuestion: through the real binary, with the official SDK
// as the client, the question tool's choice round-trips: a client with
// form elicitation gets elicitation/create tied to the call, with the
// options, and its answer is what the model reads next; a client without
// elicitation sees the turn end after the question, with no second model
// request.
func TestTypeScriptQuestion(t *testing.T) {
	f := newTSFeatures(t)
	model := &featureModel{t: t, answer: func(_ *featureModel, _ *http.Request, body map[string]any) string {
		if role, c := lastMessage(body); role == "tool" {
			return sseText("Went with: " + c)
		}
		return sseCall("call_q", "question", map[string]any{"question": "Which database?", "options": []string{"postgres", "sqlite"}})
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	with := f.run(srv, "", map[string]any{"name": "question", "prompt": "set up storage (elicitation)",
		"clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		"elicitationAnswer":  map[string]any{"action": "accept", "content": map[string]any{"answer": "sqlite"}}}, modelArgs(srv), "MOCK_KEY=sk-ts")
	n := len(model.requests())
	without := f.run(srv, "", map[string]any{"name": "question", "prompt": "set up storage (none)"}, modelArgs(srv), "MOCK_KEY=sk-ts")

	if len(with.Elicitations) != 1 {
		t.Fatalf("elicitations %v, want one", with.Elicitations)
	}
	el := with.Elicitations[0]
	schema, _ := json.Marshal(el["requestedSchema"])
	if el["toolCallId"] != "call_q" || el["mode"] != "form" || el["message"] != "Which database?" || !strings.Contains(string(schema), `"enum":["postgres","sqlite"]`) {
		t.Errorf("elicitation/create %v", el)
	}
	if r := with.Responses["prompt"]; r["stopReason"] != "end_turn" {
		t.Errorf("with elicitation: prompt answered %v", r)
	}
	reqs := model.requests()
	if _, c := lastMessage(reqs[n-1]); !strings.Contains(c, "The user answered: sqlite") {
		t.Errorf("with elicitation: the model read %q after the question", c)
	}
	if len(without.Elicitations) != 0 {
		t.Errorf("without elicitation: asked anyway %v", without.Elicitations)
	}
	if r := without.Responses["prompt"]; r["stopReason"] != "end_turn" {
		t.Errorf("without elicitation: prompt answered %v", r)
	}
	if got := len(model.requests()) - n; got != 1 {
		t.Errorf("without elicitation: %d model requests, want 1: the turn ends with the question", got)
	}
	var title any
	for _, us := range without.Sessions {
		for _, u := range us {
			if u["sessionUpdate"] == "tool_call" {
				title = u["title"]
			}
		}
	}
	if title != "Question: Which database?" {
		t.Errorf("without elicitation: the card's title %v", title)
	}
}
