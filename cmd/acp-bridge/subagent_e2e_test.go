package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// routedMock is an OpenAI-compatible endpoint that answers each request by
// what it is (the parent's or which subagent's, which step), not by its
// arrival order: subagents running at the same time ask in either order.
type routedMock struct {
	t      *testing.T
	handle func(w http.ResponseWriter, body map[string]any)
	mu     sync.Mutex
	reqs   []map[string]any
}

func (m *routedMock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-e2e" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		m.t.Errorf("request body: %v", err)
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, body)
	m.mu.Unlock()
	m.handle(w, body)
}

// requests returns the requests whose first user message starts with
// prefix, in arrival order.
func (m *routedMock) requests(prefix string) []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []map[string]any
	for _, b := range m.reqs {
		if strings.HasPrefix(firstUser(b), prefix) {
			out = append(out, b)
		}
	}
	return out
}

func firstUser(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for _, raw := range msgs {
		if m := raw.(map[string]any); m["role"] == "user" {
			return fmt.Sprint(m["content"])
		}
	}
	return ""
}

// step is how many assistant messages the request's context has: 0 for
// the first request of a loop.
func step(body map[string]any) int {
	n := 0
	for _, raw := range body["messages"].([]any) {
		if raw.(map[string]any)["role"] == "assistant" {
			n++
		}
	}
	return n
}

func lastMessage(body map[string]any) map[string]any {
	msgs := body["messages"].([]any)
	return msgs[len(msgs)-1].(map[string]any)
}

func toolNames(body map[string]any) []string {
	var out []string
	tools, _ := body["tools"].([]any)
	for _, raw := range tools {
		out = append(out, raw.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	slices.Sort(out)
	return out
}

// toolResults are the contents of the request's tool messages.
func toolResults(body map[string]any) []string {
	var out []string
	for _, raw := range body["messages"].([]any) {
		if m := raw.(map[string]any); m["role"] == "tool" {
			out = append(out, fmt.Sprint(m["content"]))
		}
	}
	return out
}

// calls streams tool calls, each {id, name, arguments}, then usage.
func calls(w http.ResponseWriter, in, out int, cs ...[3]string) {
	var payloads []string
	for i, c := range cs {
		args, _ := json.Marshal(c[2])
		payloads = append(payloads, delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`, i, c[0], c[1], args), ""))
	}
	payloads = append(payloads, delta(`{}`, "tool_calls"), usageOf(in, out))
	sseWrite(w, 1<<20, payloads...)
}

// say streams an answer, then usage.
func say(w http.ResponseWriter, in, out int, text string) {
	content, _ := json.Marshal(map[string]string{"content": text})
	sseWrite(w, 1<<20, delta(string(content), ""), delta(`{}`, "stop"), usageOf(in, out))
}

func taskArgs(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// card is what a client shows of one tool call.
type card struct {
	ID, Title, Parent, Status string
}

// cards folds a client's tool_call and tool_call_update notifications.
func cards(notes []map[string]any) []card {
	var order []string
	by := map[string]*card{}
	for _, n := range notes {
		u := n["update"].(map[string]any)
		kind := u["sessionUpdate"]
		if kind != "tool_call" && kind != "tool_call_update" {
			continue
		}
		id := u["toolCallId"].(string)
		c := by[id]
		if c == nil {
			c = &card{ID: id}
			by[id] = c
			order = append(order, id)
		}
		if s, ok := u["title"].(string); ok {
			c.Title = s
		}
		if s, ok := u["status"].(string); ok {
			c.Status = s
		}
		if meta, ok := u["_meta"].(map[string]any); ok {
			if link, ok := meta["acp_bridge"].(map[string]any); ok {
				c.Parent, _ = link["parentToolCallId"].(string)
			}
		}
	}
	out := make([]card, 0, len(order))
	for _, id := range order {
		out = append(out, *by[id])
	}
	slices.SortFunc(out, func(a, b card) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// TestBinarySubagentsInParallel: the parent delegates to two explorers in
// one step; each explorer's first request waits until the other's has
// arrived, so the turn finishes only if they run at the same time. Each
// is offered read-only tools only, and its call to bash (restricted away)
// fails as unknown. The answers reach the parent's next request, the
// children's cards hang under the task cards, usage adds up, and a load in
// a new process replays the nested cards as they were.
func TestBinarySubagentsInParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(work, "b.txt"), []byte("beta\n"), 0o644)

	var arrivedA, arrivedB sync.Once
	a, b := make(chan struct{}), make(chan struct{})
	both := func(mine *sync.Once, ch chan struct{}, other chan struct{}) {
		mine.Do(func() { close(ch) })
		select {
		case <-other:
		case <-time.After(60 * time.Second): // a deadlock guard, not a timing: run one after the other, they never meet
			t.Errorf("the other subagent's request never came while this one waited: they do not run at the same time")
		}
	}
	m := &routedMock{t: t}
	m.handle = func(w http.ResponseWriter, body map[string]any) {
		first := firstUser(body)
		switch {
		case first == "Compare a.txt and b.txt":
			if step(body) == 0 {
				calls(w, 100, 10,
					[3]string{"call_a", "task", taskArgs(t, map[string]any{"profile": "explorer", "description": "Read a", "prompt": "SUB-A: what does a.txt say?"})},
					[3]string{"call_b", "task", taskArgs(t, map[string]any{"profile": "explorer", "description": "Read b", "prompt": "SUB-B: what does b.txt say?"})})
				return
			}
			say(w, 200, 20, "They differ.")
		case strings.HasPrefix(first, "SUB-A"), strings.HasPrefix(first, "SUB-B"):
			letter := first[4:5]
			file := strings.ToLower(letter) + ".txt"
			if step(body) == 0 {
				if letter == "A" {
					both(&arrivedA, a, b)
				} else {
					both(&arrivedB, b, a)
				}
				calls(w, 50, 5,
					[3]string{"r1", "read", fmt.Sprintf(`{"file_path":%q}`, file)},
					[3]string{"r2", "bash", `{"command":"rm -rf ."}`})
				return
			}
			say(w, 60, 6, letter+" read: "+strings.Join(toolResults(body), " | "))
		default:
			t.Errorf("unexpected request: %q", first)
			http.Error(w, "unexpected", http.StatusInternalServerError)
		}
	}
	srv := httptest.NewServer(m)
	defer srv.Close()

	c := startE2E(t, mockEnv, mockArgs(srv, "--state-dir", state)...)
	sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
	res := c.call("session/prompt", textPrompt(sid, "Compare a.txt and b.txt"))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("stopReason = %v", res["stopReason"])
	}

	// What each explorer was offered and read.
	for _, who := range []string{"SUB-A", "SUB-B"} {
		reqs := m.requests(who)
		if len(reqs) != 2 {
			t.Fatalf("%s made %d requests, want 2", who, len(reqs))
		}
		// The read-only tools by their facts (job_output only reads a
		// background job's output, web_fetch a page); never bash, write,
		// edit, task or the session's own todo_write.
		if d := cmp.Diff([]string{"glob", "grep", "job_output", "read", "web_fetch"}, toolNames(reqs[0])); d != "" {
			t.Errorf("%s was offered (-want +got):\n%s", who, d)
		}
		sys := fmt.Sprint(reqs[0]["messages"].([]any)[0].(map[string]any)["content"])
		if !strings.Contains(sys, "You are an explorer") || len(reqs[0]["messages"].([]any)) != 2 {
			t.Errorf("%s's first request is not a fresh context with its profile's instructions: %v", who, reqs[0]["messages"])
		}
		results := toolResults(reqs[1])
		if len(results) != 2 || !strings.Contains(results[1], `unknown tool \"bash\"`) && !strings.Contains(results[1], `unknown tool "bash"`) {
			t.Errorf("%s's results = %q; want bash to fail as unknown", who, results)
		}
	}
	parent := m.requests("Compare")
	if len(parent) != 2 {
		t.Fatalf("the parent made %d requests, want 2", len(parent))
	}
	if !slices.Contains(toolNames(parent[0]), "task") {
		t.Errorf("the parent was not offered task: %v", toolNames(parent[0]))
	}
	got := toolResults(parent[1])
	if len(got) != 2 || !strings.Contains(got[0], "A read: ") || !strings.Contains(got[0], "alpha") || !strings.Contains(got[1], "B read: ") || !strings.Contains(got[1], "beta") {
		t.Errorf("the parent read %q", got)
	}
	// The turn's usage is the parent's and the subagents': 110+220 and
	// 2×(55+66).
	meta, _ := res["_meta"].(map[string]any)
	if u, _ := meta["usage"].(map[string]any); u["totalTokens"] != float64(110+220+2*(55+66)) {
		t.Errorf("_meta.usage = %v", meta["usage"])
	}

	live := cards(c.notes)
	want := []card{
		{ID: "call_a", Title: "explorer: Read a", Status: "completed"},
		{ID: "call_a:task:1", Title: "explorer: Read a.txt", Parent: "call_a", Status: "completed"},
		{ID: "call_a:task:2", Title: "explorer: rm -rf .", Parent: "call_a", Status: "failed"},
		{ID: "call_b", Title: "explorer: Read b", Status: "completed"},
		{ID: "call_b:task:1", Title: "explorer: Read b.txt", Parent: "call_b", Status: "completed"},
		{ID: "call_b:task:2", Title: "explorer: rm -rf .", Parent: "call_b", Status: "failed"},
	}
	if d := cmp.Diff(want, live); d != "" {
		t.Errorf("cards (-want +got):\n%s", d)
	}

	// A new process loads the session: the same cards, nested the same way.
	c2 := startE2E(t, mockEnv, mockArgs(srv, "--state-dir", state)...)
	c2.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}})
	if d := cmp.Diff(live, cards(c2.notes)); d != "" {
		t.Errorf("replayed cards (-live +replayed):\n%s", d)
	}
}

// TestBinarySubagentTypedAnswer: with an output schema, an answer that is
// not of its shape is sent back to the subagent with what is wrong, and
// the parent reads the corrected value as JSON. A schema outside the
// structured subset is refused loudly.
func TestBinarySubagentTypedAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"files": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
		"required": []string{"files"}, "additionalProperties": false}
	bad := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "string", "pattern": "^a"}}}
	m := &routedMock{t: t}
	m.handle = func(w http.ResponseWriter, body map[string]any) {
		first := firstUser(body)
		switch {
		case first == "List the files":
			if step(body) == 0 {
				calls(w, 10, 1,
					[3]string{"call_t", "task", taskArgs(t, map[string]any{"profile": "explorer", "prompt": "SUB-T: list the files", "output_schema": schema})},
					[3]string{"call_u", "task", taskArgs(t, map[string]any{"profile": "explorer", "prompt": "SUB-U: never runs", "output_schema": bad})})
				return
			}
			say(w, 10, 1, "Done.")
		case strings.HasPrefix(first, "SUB-T"):
			switch step(body) {
			case 0:
				say(w, 10, 1, "The files are a.txt and b.txt.")
			case 1:
				say(w, 10, 1, `{"files": "a.txt"}`)
			default:
				say(w, 10, 1, "```json\n{\"files\": [\"a.txt\", \"b.txt\"]}\n```")
			}
		default:
			t.Errorf("unexpected request: %q", first)
			http.Error(w, "unexpected", http.StatusInternalServerError)
		}
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c := startE2E(t, mockEnv, mockArgs(srv)...)
	sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
	if res := c.call("session/prompt", textPrompt(sid, "List the files")); res["stopReason"] != "end_turn" {
		t.Fatalf("stopReason = %v", res["stopReason"])
	}
	sub := m.requests("SUB-T")
	if len(sub) != 3 {
		t.Fatalf("the subagent made %d requests, want 3", len(sub))
	}
	if sys := fmt.Sprint(sub[0]["messages"].([]any)[0].(map[string]any)["content"]); !strings.Contains(sys, `"required":["files"]`) {
		t.Errorf("the subagent was not told the schema: %q", sys)
	}
	for i, r := range sub[1:] {
		if last := fmt.Sprint(lastMessage(r)["content"]); !strings.Contains(last, "does not match the output schema") {
			t.Errorf("correction %d = %q", i+1, last)
		}
	}
	if last := fmt.Sprint(lastMessage(sub[2])["content"]); !strings.Contains(last, `"files" must be an array`) {
		t.Errorf("the second correction does not say where: %q", last)
	}
	got := toolResults(m.requests("List")[1])
	if len(got) != 2 || got[0] != `{"files":["a.txt","b.txt"]}` {
		t.Errorf("the parent read %q; want the value as JSON", got)
	}
	if len(got) == 2 && !strings.Contains(got[1], `keyword \"pattern\" is not supported`) && !strings.Contains(got[1], `keyword "pattern" is not supported`) {
		t.Errorf("a schema outside the subset: %q", got[1])
	}
	if len(m.requests("SUB-U")) != 0 {
		t.Errorf("a subagent with a refused schema ran")
	}
}

// TestBinarySubagentAnyRootSchema: an output schema may have any JSON root
// and any node of the subset at its root, oneOf included (the seed's
// structured subset): a union at the root, an array, a string enum, a
// union inside a property. An answer that matches no branch is sent back
// with what is wrong; the parent reads each value as JSON.
func TestBinarySubagentAnyRootSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tests := []struct {
		schema  string
		answers []string // the subagent's, in order: each but the last is corrected
		want    string   // what the parent reads
	}{
		{`{"oneOf":[{"type":"array","items":{"type":"string"}},{"type":"object","properties":{"error":{"type":"string"}},"required":["error"],"additionalProperties":false}]}`,
			[]string{`42`, `["a.txt", "b.txt"]`}, `["a.txt","b.txt"]`},
		{`{"type":"array","items":{"type":"integer"}}`, []string{`[1, 2]`}, `[1,2]`},
		{`{"type":"string","enum":["yes","no"]}`, []string{`"maybe"`, `"yes"`}, `"yes"`},
		{`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"null"}]}},"required":["v"],"additionalProperties":false}`,
			[]string{`{"v": null}`}, `{"v":null}`},
	}
	m := &routedMock{t: t}
	m.handle = func(w http.ResponseWriter, body map[string]any) {
		first := firstUser(body)
		if first == "Typed answers" {
			if step(body) > 0 {
				say(w, 10, 1, "Done.")
				return
			}
			var cs [][3]string
			for i, tt := range tests {
				cs = append(cs, [3]string{fmt.Sprintf("call_%d", i), "task",
					taskArgs(t, map[string]any{"profile": "explorer", "prompt": fmt.Sprintf("SUB-%d: answer", i), "output_schema": json.RawMessage(tt.schema)})})
			}
			calls(w, 10, 1, cs...)
			return
		}
		var i int
		if _, err := fmt.Sscanf(first, "SUB-%d:", &i); err != nil || i >= len(tests) {
			t.Errorf("unexpected request: %q", first)
			http.Error(w, "unexpected", http.StatusInternalServerError)
			return
		}
		say(w, 10, 1, tests[i].answers[min(step(body), len(tests[i].answers)-1)])
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c := startE2E(t, mockEnv, mockArgs(srv)...)
	sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
	if res := c.call("session/prompt", textPrompt(sid, "Typed answers")); res["stopReason"] != "end_turn" {
		t.Fatalf("stopReason = %v", res["stopReason"])
	}
	parent := m.requests("Typed answers")
	if len(parent) != 2 {
		t.Fatalf("the parent made %d requests, want 2", len(parent))
	}
	got := toolResults(parent[1])
	var want []string
	for i, tt := range tests {
		want = append(want, tt.want)
		if n := len(m.requests(fmt.Sprintf("SUB-%d", i))); n != len(tt.answers) {
			t.Errorf("schema %s: the subagent made %d requests, want %d", tt.schema, n, len(tt.answers))
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("what the parent read (-want +got):\n%s", d)
	}
}

// TestBinarySubagentProjectProfile: a profile file in the project decides
// what its subagent may use, and an edit of the file takes effect at the
// next turn; a broken file is left out with a notice naming it.
func TestBinarySubagentProjectProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	dir := filepath.Join(work, ".acp-bridge", "agents")
	os.MkdirAll(dir, 0o755)
	profile := func(tools string) {
		t.Helper()
		text := "---\nname: reader\ndescription: Reads one file and says what it holds\ntools: " + tools + "\n---\nYou read files for the lead.\n"
		if err := os.WriteFile(filepath.Join(dir, "reader.md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	profile("read")
	os.WriteFile(filepath.Join(dir, "broken.md"), []byte("---\nname: broken\ntools: read\n---\n"), 0o644)

	m := &routedMock{t: t}
	m.handle = func(w http.ResponseWriter, body map[string]any) {
		first := firstUser(body)
		switch {
		case strings.HasPrefix(first, "Delegate"):
			if lastMessage(body)["role"] == "tool" {
				say(w, 10, 1, "Done.")
				return
			}
			id := fmt.Sprintf("call_p%d", step(body))
			calls(w, 10, 1, [3]string{id, "task", taskArgs(t, map[string]any{"profile": "reader", "prompt": "SUB-R: " + lastUserMessage(body)})})
		case strings.HasPrefix(first, "SUB-R"):
			say(w, 10, 1, "Nothing to read.")
		default:
			t.Errorf("unexpected request: %q", first)
			http.Error(w, "unexpected", http.StatusInternalServerError)
		}
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c := startE2E(t, mockEnv, mockArgs(srv)...)
	sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]
	c.call("session/prompt", textPrompt(sid, "Delegate one"))
	profile("grep, glob")
	c.call("session/prompt", textPrompt(sid, "Delegate two"))

	desc := ""
	for _, tl := range m.requests("Delegate one")[0]["tools"].([]any) {
		if f := tl.(map[string]any)["function"].(map[string]any); f["name"] == "task" {
			desc = fmt.Sprint(f["description"])
		}
	}
	if !strings.Contains(desc, "- reader: Reads one file") || strings.Contains(desc, "broken") {
		t.Errorf("the task tool's description = %q", desc)
	}
	one, two := m.requests("SUB-R: Delegate one"), m.requests("SUB-R: Delegate two")
	if len(one) != 1 || len(two) != 1 {
		t.Fatalf("subagent requests: %d, %d", len(one), len(two))
	}
	if d := cmp.Diff([]string{"read"}, toolNames(one[0])); d != "" {
		t.Errorf("first turn's reader tools (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"glob", "grep"}, toolNames(two[0])); d != "" {
		t.Errorf("after the edit, reader tools (-want +got):\n%s", d)
	}
	if sys := fmt.Sprint(one[0]["messages"].([]any)[0].(map[string]any)["content"]); !strings.Contains(sys, "You read files for the lead.") {
		t.Errorf("the profile's instructions are not in the subagent's system prompt")
	}
	text := c.agentText()
	if strings.Count(text, "broken.md") != 1 || !strings.Contains(text, "no description") {
		t.Errorf("the broken profile was not told once: %q", text)
	}
}
