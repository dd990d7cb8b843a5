package conformance_test

// Golden transcripts of the editor mapping: every card kind with Zed's
// terminal convention on and off, the permission paths, cancellation in the
// middle of a command, and replay. Each testdata/*.txtar holds
//
//	a header saying what the case checks
//	-- model --   the scripted model (model.ParseScript)
//	-- file P --  a file the fake edit/write tools start with (optional)
//	-- client --  the editor's side, one JSON object a line (see goldenClient)
//	-- agent --   every line the agent wrote, in order
//	-- replay --  the updates the session's log gives when translated again
//
// The agent runs in process over pipes, inside a synctest bubble, with
// test-only tools (a terminal tool that streams output, edit/write tools
// that produce diff cards, generic and misbehaving tools), so transcripts
// are deterministic to the byte, output coalescing included.
//
// Besides comparing with the files (go test ./conformance -run Golden
// -update rewrites them), every run checks properties that must hold
// whatever the file says: nothing of a turn after its prompt response, the
// terminal sequence, data bounds, absolute paths, permission requests for
// cards already shown, and replay equal to what the editor saw live.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var goldenUpdate = flag.Bool("update", false, "rewrite the agent and replay sections of conformance/testdata/*.txtar")

const goldenCwd = "/work/project"

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := txtar.Parse(data)
			var agentLines, replayLines []string
			synctest.Test(t, func(t *testing.T) {
				agentLines, replayLines = goldenRun(t, ar)
			})
			gotAgent := strings.Join(agentLines, "\n") + "\n"
			gotReplay := strings.Join(replayLines, "\n") + "\n"
			if *goldenUpdate {
				goldenSet(ar, "agent", gotAgent)
				goldenSet(ar, "replay", gotReplay)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			goldenDiff(t, "agent", goldenFile(ar, "agent"), gotAgent)
			goldenDiff(t, "replay", goldenFile(ar, "replay"), gotReplay)
		})
	}
}

// goldenDiff reports a section that differs as a line diff (cmp.Diff).
func goldenDiff(t *testing.T, section, want, got string) {
	t.Helper()
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("-- %s -- differs (-want +got; run with -update to accept):\n%s", section, diff)
	}
}

// ---- txtar (golang.org/x/tools/txtar) ----

// goldenFile is the named section's text, "" when there is none.
func goldenFile(ar *txtar.Archive, name string) string {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	return ""
}

// goldenSet replaces the named section, or appends it.
func goldenSet(ar *txtar.Archive, name, body string) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = []byte(body)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(body)})
}

// ---- the run ----

// goldenRun plays one archive and returns the agent's lines and the replay.
func goldenRun(t *testing.T, ar *txtar.Archive) (agentLines, replayLines []string) {
	script, err := model.ParseScript([]byte(goldenFile(ar, "model")))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		if p, ok := strings.CutPrefix(f.Name, "file "); ok {
			files[filepath.Join(goldenCwd, p)] = string(f.Data)
		}
	}
	reg := registry.New()
	for _, d := range goldenTools(t, files) {
		if _, err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}

	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	var ag *agent.Agent
	conn := acp.NewConn(context.Background(), func(c acp.Client) acp.Agent {
		ag = agent.New(c, agent.Options{Registry: reg, Model: script, Version: "test",
			Now:      func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
			NewID:    func() string { return "sess-1" },
			CheckDir: func(string) error { return nil }}) // the workspace lives in the client
		return ag
	}, toAgentR, toClientW, toAgentR, nil)

	cl := newGoldenClient(t, toAgentW, toClientR)
	var initCaps acp.ClientCapabilities
	for _, line := range strings.Split(goldenFile(ar, "client"), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var step goldenStep
		if err := json.Unmarshal([]byte(line), &step); err != nil {
			t.Fatalf("client line %q: %v", line, err)
		}
		if step.Send == acp.MethodInitialize {
			var p acp.InitializeRequest
			_ = json.Unmarshal(step.Params, &p)
			initCaps = p.ClientCapabilities
		}
		cl.do(step)
	}
	synctest.Wait() // anything still on its way shows up (and is checked) below
	toAgentW.Close()
	conn.Wait()
	events, ok := ag.Events("sess-1")
	ag.Shutdown()
	toClientW.Close()
	<-cl.done
	agentLines = cl.agentLines()
	if !ok {
		t.Fatal("no session sess-1")
	}
	replay := goldenReplay(reg, initCaps, events)
	if again := goldenReplay(reg, initCaps, events); !slices.Equal(replay, again) {
		t.Error("translating the same events twice gave different updates")
	}
	goldenCheck(t, cl.transcript(), initCaps.TerminalOutput(), replay)
	goldenCheckNames(t, append(cl.transcript(), prefixed("← ", replay)...), events)
	return agentLines, replay
}

func prefixed(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + `{"method":"session/update","params":{"update":` + l + `}}`
	}
	return out
}

// goldenCheckNames: every tool_call and tool_call_update of a call the
// model made carries the tool's registry name, the one the log has, live
// and on replay.
func goldenCheckNames(t *testing.T, transcript []string, events []session.Event) {
	t.Helper()
	names := map[string]string{}
	for _, ev := range events {
		if c, ok := ev.Payload.(session.ToolCall); ok {
			names[c.CallID] = c.Name
		}
	}
	for i, l := range transcript {
		dir, body := l[:len("→ ")], l[len("→ "):]
		var m goldenMsg
		if dir == "→ " || json.Unmarshal([]byte(body), &m) != nil || m.Method != acp.MethodSessionUpdate {
			continue
		}
		var u struct {
			Kind string `json:"sessionUpdate"`
			ID   string `json:"toolCallId"`
			Name string `json:"name"`
		}
		_ = json.Unmarshal(goldenField(m.Params, "update"), &u)
		if (u.Kind == "tool_call" || u.Kind == "tool_call_update") && names[u.ID] != "" && u.Name != names[u.ID] {
			t.Errorf("line %d: %s of %s named %q, want the tool's name %q: %s", i+1, u.Kind, u.ID, u.Name, names[u.ID], body)
		}
	}
}

func goldenReplay(reg *registry.Registry, caps acp.ClientCapabilities, events []session.Event) []string {
	tr := mapping.New(reg.NewScope(), mapping.Options{Cwd: goldenCwd, TerminalOutput: caps.TerminalOutput(), Replay: true})
	var out []string
	for _, ev := range events {
		for _, u := range tr.Translate(ev) {
			b, err := json.Marshal(acp.SessionNotification{SessionID: "sess-1", Update: u})
			if err != nil {
				out = append(out, "marshal error: "+err.Error())
				continue
			}
			out = append(out, string(goldenField(b, "update")))
		}
	}
	return out
}

func goldenField(b []byte, name string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	return m[name]
}

// ---- the editor side ----

// goldenStep is one line of the client section:
//
//	{"send": M, "params": P}              a request; the next step waits for its response
//	{"notify": M, "params": P}            a notification
//	{"reply": M, "result": R}             answers the next request M from the agent (in order);
//	                                      with "hold": true, only once the agent cancels it
//	                                      ($/cancel_request), as Zed does with a prompt it closes
//	{"when": S, "notify": M, "params": P} sends the notification when an agent line first contains S
//	{"sleep_ms": N}                       waits (fake time)
type goldenStep struct {
	Send    string          `json:"send,omitempty"`
	Notify  string          `json:"notify,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Reply   string          `json:"reply,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
	Hold    bool            `json:"hold,omitempty"`
	When    string          `json:"when,omitempty"`
	SleepMS int             `json:"sleep_ms,omitempty"`
}

type goldenMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

type goldenClient struct {
	t    *testing.T
	w    io.Writer
	done chan struct{}

	mu      sync.Mutex
	lines   []string // "→ " client, "← " agent
	nextID  int
	waiting map[string]chan struct{}
	replies map[string][]goldenStep
	held    map[string]goldenStep // agent request id -> the reply to give on $/cancel_request
	whens   []goldenStep
}

func newGoldenClient(t *testing.T, w io.Writer, r io.Reader) *goldenClient {
	c := &goldenClient{t: t, w: w, done: make(chan struct{}), waiting: map[string]chan struct{}{},
		replies: map[string][]goldenStep{}, held: map[string]goldenStep{}}
	go c.read(r)
	return c
}

func (c *goldenClient) write(m goldenMsg) {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		goldenMsg
	}{"2.0", m})
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.lines = append(c.lines, "→ "+string(b))
	c.mu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Errorf("write to agent: %v", err)
	}
}

func (c *goldenClient) do(s goldenStep) {
	switch {
	case s.Reply != "":
		c.mu.Lock()
		c.replies[s.Reply] = append(c.replies[s.Reply], s)
		c.mu.Unlock()
	case s.When != "":
		c.mu.Lock()
		c.whens = append(c.whens, s)
		c.mu.Unlock()
	case s.SleepMS > 0:
		time.Sleep(time.Duration(s.SleepMS) * time.Millisecond)
	case s.Notify != "":
		c.write(goldenMsg{Method: s.Notify, Params: s.Params})
	case s.Send != "":
		c.mu.Lock()
		c.nextID++
		id := fmt.Sprint(c.nextID)
		ch := make(chan struct{})
		c.waiting[id] = ch
		c.mu.Unlock()
		c.write(goldenMsg{ID: json.RawMessage(id), Method: s.Send, Params: s.Params})
		<-ch
	default:
		c.t.Fatalf("client step does nothing: %+v", s)
	}
}

func (c *goldenClient) read(r io.Reader) {
	defer close(c.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		c.mu.Lock()
		c.lines = append(c.lines, "← "+line)
		var fire []goldenStep
		c.whens = slices.DeleteFunc(c.whens, func(s goldenStep) bool {
			if strings.Contains(line, s.When) {
				fire = append(fire, s)
				return true
			}
			return false
		})
		c.mu.Unlock()
		var m goldenMsg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Errorf("agent wrote a line that is not JSON: %s", line)
			continue
		}
		switch {
		case m.Method == "" && m.ID != nil: // a response
			c.mu.Lock()
			ch := c.waiting[string(m.ID)]
			delete(c.waiting, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				close(ch)
			}
		case m.Method == acp.MethodCancelRequest:
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(m.Params, &p)
			c.mu.Lock()
			s, ok := c.held[string(p.RequestID)]
			delete(c.held, string(p.RequestID))
			c.mu.Unlock()
			if ok {
				c.answer(p.RequestID, s)
			}
		case m.ID != nil: // a request to the editor
			c.mu.Lock()
			q := c.replies[m.Method]
			var s goldenStep
			if len(q) > 0 {
				s, c.replies[m.Method] = q[0], q[1:]
			}
			if s.Hold {
				c.held[string(m.ID)] = s
			}
			c.mu.Unlock()
			switch {
			case s.Hold:
			case s.Reply == "":
				c.write(goldenMsg{ID: m.ID, Error: json.RawMessage(`{"code":-32601,"message":"the golden client has no reply for ` + m.Method + `"}`)})
			default:
				c.answer(m.ID, s)
			}
		}
		for _, s := range fire {
			c.write(goldenMsg{Method: s.Notify, Params: s.Params})
		}
	}
}

func (c *goldenClient) answer(id json.RawMessage, s goldenStep) {
	if s.Error != nil {
		c.write(goldenMsg{ID: id, Error: s.Error})
		return
	}
	c.write(goldenMsg{ID: id, Result: s.Result})
}

func (c *goldenClient) transcript() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

func (c *goldenClient) agentLines() []string {
	var out []string
	for _, l := range c.transcript() {
		if a, ok := strings.CutPrefix(l, "← "); ok {
			out = append(out, a)
		}
	}
	return out
}

// ---- test-only tools ----

type goldenRunArgs struct {
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
	// Steps is the command's output over time.
	Steps []struct {
		SleepMS int    `json:"sleep_ms,omitempty"`
		Out     string `json:"out,omitempty"`
	} `json:"steps,omitempty"`
	Exit int  `json:"exit,omitempty"`
	Ask  bool `json:"ask,omitempty"`
}

type goldenTermMeta struct {
	Output   string `json:"output"`
	ExitCode *int   `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
}

type goldenEditArgs struct {
	FilePath  string `json:"file_path"`
	OldString string `json:"old_string,omitempty"`
	NewString string `json:"new_string,omitempty"`
	Content   string `json:"content,omitempty"`
	Ask       bool   `json:"ask,omitempty"`
}

type goldenLookArgs struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

func goldenTools(t *testing.T, files map[string]string) []*registry.Def {
	var mu sync.Mutex
	must := func(d *registry.Def, err error) *registry.Def {
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	words := func(cmd string) string {
		f := strings.Fields(cmd)
		return strings.Join(f[:min(2, len(f))], " ")
	}
	diffView := func(in goldenEditArgs, r registry.Result) registry.View {
		var ds []registry.FileDiff
		if r.IsError || json.Unmarshal(r.Meta, &ds) != nil || len(ds) == 0 {
			return nil
		}
		return registry.DiffCard{Title: "Edit " + in.FilePath, Diffs: ds}
	}
	editPermission := func(c *registry.Call, in goldenEditArgs) *registry.Permission {
		if !in.Ask {
			return nil
		}
		return &registry.Permission{Reason: "edits ask", Key: "edit:" + c.Cwd, Subject: "edits in this workspace"}
	}
	return []*registry.Def{
		// run: a terminal tool whose output streams on a script.
		must(registry.Define(registry.Tool[goldenRunArgs, goldenTermMeta]{
			Name: "run",
			Run: func(ctx context.Context, c *registry.Call, in goldenRunArgs) (goldenTermMeta, error) {
				var out strings.Builder
				for _, s := range in.Steps {
					select {
					case <-ctx.Done():
						return goldenTermMeta{Output: out.String(), Signal: "SIGTERM"}, nil
					case <-time.After(time.Duration(s.SleepMS) * time.Millisecond):
					}
					out.WriteString(s.Out)
					c.Output([]byte(s.Out))
				}
				code := in.Exit
				return goldenTermMeta{Output: out.String(), ExitCode: &code}, nil
			},
			Render: func(_ goldenRunArgs, m goldenTermMeta) []registry.Content {
				if m.ExitCode == nil {
					return []registry.Content{registry.Text(m.Output + "\n[killed by signal: " + m.Signal + "]")}
				}
				return []registry.Content{registry.Text(fmt.Sprintf("%s\n[exit code: %d]", m.Output, *m.ExitCode))}
			},
			Meta: func(_ goldenRunArgs, m goldenTermMeta) any { return m },
			PresentCall: func(in goldenRunArgs) registry.View {
				return registry.TerminalCard{Command: in.Command, Description: in.Description}
			},
			PresentResult: func(in goldenRunArgs, r registry.Result) registry.View {
				var m goldenTermMeta
				if json.Unmarshal(r.Meta, &m) != nil {
					return nil
				}
				return registry.TerminalCard{Command: in.Command, Output: m.Output, ExitCode: m.ExitCode, Signal: m.Signal}
			},
			Permission: func(_ *registry.Call, in goldenRunArgs) *registry.Permission {
				if !in.Ask {
					return nil
				}
				w := words(in.Command)
				return &registry.Permission{Reason: "commands ask", Key: "run:" + w, Subject: "`" + w + "`"}
			},
		})),
		// edit: a known-position replacement (diffs.FromEdits).
		must(registry.Define(registry.Tool[goldenEditArgs, []registry.FileDiff]{
			Name: "edit",
			Run: func(_ context.Context, c *registry.Call, in goldenEditArgs) ([]registry.FileDiff, error) {
				mu.Lock()
				defer mu.Unlock()
				p := filepath.Join(c.Cwd, in.FilePath)
				old, ok := files[p]
				i := strings.Index(old, in.OldString)
				if !ok || i < 0 || in.OldString == "" {
					return nil, registry.Errorf("EDIT_NO_MATCH", "old_string not found in "+p)
				}
				edits := []diffs.Edit{{Start: i, End: i + len(in.OldString), New: in.NewString}}
				files[p] = old[:i] + in.NewString + old[i+len(in.OldString):]
				return diffs.FromEdits(p, old, edits), nil
			},
			Render: func(in goldenEditArgs, _ []registry.FileDiff) []registry.Content {
				return []registry.Content{registry.Text("The file " + in.FilePath + " has been updated.")}
			},
			Meta: func(_ goldenEditArgs, ds []registry.FileDiff) any { return ds },
			PresentCall: func(in goldenEditArgs) registry.View {
				var old *string
				if in.OldString != "" {
					old = &in.OldString
				}
				return registry.DiffCard{Title: "Edit " + in.FilePath, Diffs: []registry.FileDiff{{Path: in.FilePath, OldText: old, NewText: in.NewString}}}
			},
			PresentResult: diffView,
			Permission:    editPermission,
		})),
		// write: a whole-file replacement (diffs.Compute).
		must(registry.Define(registry.Tool[goldenEditArgs, []registry.FileDiff]{
			Name: "write",
			Run: func(_ context.Context, c *registry.Call, in goldenEditArgs) ([]registry.FileDiff, error) {
				mu.Lock()
				defer mu.Unlock()
				p := filepath.Join(c.Cwd, in.FilePath)
				var before *string
				if old, ok := files[p]; ok {
					before = &old
				}
				files[p] = in.Content
				return diffs.Compute(p, before, in.Content), nil
			},
			Render: func(in goldenEditArgs, _ []registry.FileDiff) []registry.Content {
				return []registry.Content{registry.Text("Wrote " + in.FilePath)}
			},
			Meta: func(_ goldenEditArgs, ds []registry.FileDiff) any { return ds },
			PresentCall: func(in goldenEditArgs) registry.View {
				return registry.DiffCard{Title: "Write " + in.FilePath, Diffs: []registry.FileDiff{{Path: in.FilePath, NewText: in.Content}}}
			},
			PresentResult: func(in goldenEditArgs, r registry.Result) registry.View {
				v, ok := diffView(in, r).(registry.DiffCard)
				if !ok {
					return nil
				}
				v.Title = "Write " + in.FilePath
				return v
			},
			Permission: editPermission,
		})),
		// look: a generic card with a location.
		must(registry.Define(registry.Tool[goldenLookArgs, string]{
			Name: "look",
			Run: func(_ context.Context, c *registry.Call, in goldenLookArgs) (string, error) {
				return "found it at line " + fmt.Sprint(in.Line), nil
			},
			PresentCall: func(in goldenLookArgs) registry.View {
				return registry.GenericCard{Title: "Look " + in.Path, Kind: "search",
					Locations: []registry.Location{{Path: in.Path, Line: in.Line}}}
			},
		})),
		// plain: no presenters at all.
		must(registry.Define(registry.Tool[goldenLookArgs, string]{
			Name: "plain",
			Run:  func(context.Context, *registry.Call, goldenLookArgs) (string, error) { return "plain result", nil },
		})),
		// panicky: presenters that panic.
		must(registry.Define(registry.Tool[goldenLookArgs, string]{
			Name:          "panicky",
			Run:           func(context.Context, *registry.Call, goldenLookArgs) (string, error) { return "raw result", nil },
			PresentCall:   func(goldenLookArgs) registry.View { panic("presentCall broke") },
			PresentResult: func(goldenLookArgs, registry.Result) registry.View { panic("presentResult broke") },
		})),
		// liar: a generic call whose result claims to be a terminal.
		must(registry.Define(registry.Tool[goldenLookArgs, string]{
			Name:        "liar",
			Run:         func(context.Context, *registry.Call, goldenLookArgs) (string, error) { return "liar's raw result", nil },
			PresentCall: func(goldenLookArgs) registry.View { return registry.GenericCard{Title: "Not a terminal"} },
			PresentResult: func(goldenLookArgs, registry.Result) registry.View {
				return registry.TerminalCard{Command: "echo", Output: "this must not show"}
			},
		})),
	}
}

// ---- properties every transcript must have ----

// goldenCard is a card as the editor holds it after applying updates.
type goldenCard struct {
	Title, Kind, Status string
	Content, Locations  string
	RawInput, RawOutput string
	Terminal            string // terminal_output data, concatenated
	Exited              bool
}

func goldenFold(cards map[string]*goldenCard, order *[]string, update json.RawMessage) {
	var u struct {
		Kind      string          `json:"sessionUpdate"`
		ID        string          `json:"toolCallId"`
		Title     *string         `json:"title"`
		ToolKind  *string         `json:"kind"`
		Status    *string         `json:"status"`
		Content   json.RawMessage `json:"content"`
		Locations json.RawMessage `json:"locations"`
		RawInput  json.RawMessage `json:"rawInput"`
		RawOutput json.RawMessage `json:"rawOutput"`
		Meta      struct {
			Output *struct {
				Data string `json:"data"`
			} `json:"terminal_output"`
			Exit json.RawMessage `json:"terminal_exit"`
		} `json:"_meta"`
	}
	if json.Unmarshal(update, &u) != nil || (u.Kind != "tool_call" && u.Kind != "tool_call_update") {
		return
	}
	c := cards[u.ID]
	if c == nil {
		c = &goldenCard{}
		cards[u.ID] = c
		*order = append(*order, u.ID)
	}
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&c.Title, u.Title)
	set(&c.Kind, u.ToolKind)
	set(&c.Status, u.Status)
	for dst, src := range map[*string]json.RawMessage{&c.Content: u.Content, &c.Locations: u.Locations, &c.RawInput: u.RawInput, &c.RawOutput: u.RawOutput} {
		if src != nil {
			*dst = string(src)
		}
	}
	if u.Meta.Output != nil {
		c.Terminal += u.Meta.Output.Data
	}
	if u.Meta.Exit != nil {
		c.Exited = true
	}
}

func goldenCheck(t *testing.T, transcript []string, terminalOn bool, replay []string) {
	t.Helper()
	live := map[string]*goldenCard{}
	var liveOrder []string
	shown := map[string]bool{}  // cards the editor knows
	exited := map[string]bool{} // terminals closed
	promptIDs := map[string]bool{}
	turnOpen := false
	for i, l := range transcript {
		dir, body := l[:len("→ ")], l[len("→ "):]
		var m goldenMsg
		_ = json.Unmarshal([]byte(body), &m)
		if dir == "→ " {
			if m.Method == acp.MethodSessionPrompt {
				promptIDs[string(m.ID)] = true
				turnOpen = true
			}
			continue
		}
		switch {
		case m.Method == "" && promptIDs[string(m.ID)]:
			turnOpen = false
		case m.Method == acp.MethodSessionUpdate:
			upd := goldenField(m.Params, "update")
			// Session bookkeeping (commands, modes, options) may come between
			// turns; nothing about a turn's conversation or cards may.
			var kind struct {
				SessionUpdate string `json:"sessionUpdate"`
			}
			_ = json.Unmarshal(upd, &kind)
			between := kind.SessionUpdate == "available_commands_update" || kind.SessionUpdate == "current_mode_update" || kind.SessionUpdate == "config_option_update"
			if !turnOpen && !between {
				t.Errorf("line %d: a session/update outside a turn (after its prompt response): %s", i+1, body)
			}
			goldenCheckUpdate(t, i+1, upd, terminalOn, shown, exited)
			goldenFold(live, &liveOrder, upd)
		case m.Method == acp.MethodSessionRequestPermission:
			var p acp.RequestPermissionRequest
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Errorf("line %d: bad permission request: %v", i+1, err)
				continue
			}
			if !shown[p.ToolCall.ToolCallID] {
				t.Errorf("line %d: permission asked for a card not shown yet", i+1)
			}
			if p.ToolCall.Title == nil || *p.ToolCall.Title == "" || p.ToolCall.Kind == nil || len(p.ToolCall.RawInput) == 0 {
				t.Errorf("line %d: permission toolCall needs title, kind and rawInput: %s", i+1, body)
			}
			kinds := map[acp.PermissionOptionKind]bool{}
			for _, o := range p.Options {
				kinds[o.Kind] = true
			}
			if len(kinds) != 4 {
				t.Errorf("line %d: permission options of %d kinds, want all 4", i+1, len(kinds))
			}
		}
	}
	for _, id := range liveOrder {
		if s := live[id].Status; s != "completed" && s != "failed" {
			t.Errorf("card %s ended %q: every card needs a final status", id, s)
		}
	}
	// Replay: the editor must end up with the same cards. A command cut
	// short is the one allowed difference: its partial output was never
	// stored, so the replayed terminal holds only what the result says.
	rep := map[string]*goldenCard{}
	var repOrder []string
	for _, u := range replay {
		goldenFold(rep, &repOrder, json.RawMessage(u))
	}
	if !slices.Equal(liveOrder, repOrder) {
		t.Errorf("replay shows cards %v, live showed %v", repOrder, liveOrder)
	}
	for _, id := range liveOrder {
		l, r := *live[id], rep[id]
		if r == nil {
			continue
		}
		// A call that ended in an error (rawOutput is the model's text,
		// "Error: …") stored no output: the replay shows what the result has.
		if strings.Contains(l.RawOutput, `"text":"Error: `) && (l.Terminal != "" || strings.Contains(l.Content, "```console")) {
			if !strings.HasSuffix(l.Terminal, r.Terminal) {
				t.Errorf("card %s: replayed terminal %q is not the end of the live one %q", id, r.Terminal, l.Terminal)
			}
			l.Terminal, l.Content = r.Terminal, r.Content
		}
		if l != *r {
			t.Errorf("card %s differs on replay:\n live %+v\nreplay %+v", id, l, *r)
		}
	}
}

func goldenCheckUpdate(t *testing.T, line int, upd json.RawMessage, terminalOn bool, shown, exited map[string]bool) {
	t.Helper()
	if k := string(goldenField(upd, "sessionUpdate")); k != `"tool_call"` && k != `"tool_call_update"` {
		return
	}
	var u struct {
		Kind      string `json:"sessionUpdate"`
		ID        string `json:"toolCallId"`
		Status    string `json:"status"`
		Content   []acp.ToolCallContent
		Locations []acp.ToolCallLocation
		Meta      map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(upd, &u); err != nil {
		t.Errorf("line %d: update does not decode: %v", line, err)
		return
	}
	if u.Kind == "tool_call" {
		shown[u.ID] = true
	} else if !shown[u.ID] {
		t.Errorf("line %d: tool_call_update for %s before its tool_call", line, u.ID)
	}
	if exited[u.ID] {
		t.Errorf("line %d: update for %s after its terminal_exit", line, u.ID)
	}
	for _, l := range u.Locations {
		if !filepath.IsAbs(l.Path) {
			t.Errorf("line %d: location path %q is not absolute", line, l.Path)
		}
	}
	for _, c := range u.Content {
		switch c.Type {
		case "diff":
			if !filepath.IsAbs(c.Path) {
				t.Errorf("line %d: diff path %q is not absolute", line, c.Path)
			}
			if c.OldText != nil && *c.OldText == c.NewText {
				t.Errorf("line %d: a diff block that shows no change", line)
			}
		case "terminal":
			if !terminalOn {
				t.Errorf("line %d: terminal content sent to a client without the terminal convention", line)
			}
			if u.Kind != "tool_call" || u.Meta["terminal_info"] == nil {
				t.Errorf("line %d: terminal content without terminal_info in the same tool_call", line)
			}
		}
	}
	if len(u.Meta) > 0 && !terminalOn {
		t.Errorf("line %d: _meta terminal keys sent to a client without the convention", line)
	}
	if out := u.Meta["terminal_output"]; out != nil {
		var o struct {
			Data string `json:"data"`
		}
		_ = json.Unmarshal(out, &o)
		if len(o.Data) > mapping.MaxOutputChunk || !utf8.ValidString(o.Data) {
			t.Errorf("line %d: terminal_output of %d bytes (valid UTF-8: %v)", line, len(o.Data), utf8.ValidString(o.Data))
		}
	}
	if u.Meta["terminal_exit"] != nil {
		exited[u.ID] = true
		if u.Status != "completed" && u.Status != "failed" {
			t.Errorf("line %d: terminal_exit without a final status", line)
		}
		if u.Content != nil && u.Meta["terminal_output"] != nil {
			t.Errorf("line %d: the final update of a terminal that ran carries content", line)
		}
	}
}
