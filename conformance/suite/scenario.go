package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// A scenario is a txtar transcript (see testdata/scenarios/README):
//
//   - the comment says what it checks;
//   - "client": the client's messages, one JSON-RPC message a line, with
//     $CWD (the workspace) and $SESSION, $SESSION2… (the session ids the
//     agent returned, in order) substituted, and directives: "!async" (do
//     not wait for the next request's response), "!wait update [KIND]", "!wait
//     request METHOD", "!wait response ID", "!sleep DURATION", "!hold"
//     (permission requests of the last session wait until a session/cancel
//     is sent, then answer cancelled);
//   - "answers": scripted replies to the agent's requests, one
//     {"method", "result"|"error"} a line, used in order per method; without
//     one the emulated editor answers;
//   - "files/PATH": files put in the workspace before the agent starts;
//   - any other file (e.g. "model.json"): put in a scenario directory that
//     replaces {scenario} in the agent command;
//   - "agent": the expected agent output, normalized: session ids become
//     $SESSION, $SESSION2…, the workspace $CWD, agentInfo.version $VERSION,
//     timestamps $TIME.

// ScenarioResult is the outcome of one scenario.
type ScenarioResult struct {
	Name     string
	Got      string    // the normalized agent output
	Want     string    // the golden agent section
	Diff     string    // "" when Got equals Want
	Offences []Offence // failed mandatory trace checks (schema, tool calls, ...)
	Updated  bool      // the golden was rewritten
}

// OK reports whether the scenario matched its golden and broke no check.
func (r *ScenarioResult) OK() bool { return r.Diff == "" && len(r.Offences) == 0 }

// RunScenario replays archive a (named name) against the agent argv. With
// update, a differing agent section is rewritten in a.
func RunScenario(ctx context.Context, name string, a *Archive, argv []string, schema *acpschema.Schema, update bool) (*ScenarioResult, error) {
	return runScenario(ctx, name, a, argv, func(args []string) Launcher { return Command(args, nil) }, schema, update)
}

// runScenario is RunScenario with the way to launch an agent injected, so
// the suite's tests can replay scenarios against an in-memory agent.
func runScenario(ctx context.Context, name string, a *Archive, argv []string, launch func([]string) Launcher, schema *acpschema.Schema, update bool) (*ScenarioResult, error) {
	script, ok := a.File("client")
	if !ok {
		return nil, fmt.Errorf("%s: no client section", name)
	}
	caps := capsOf(script)
	got, es, err := replay(ctx, name, a, argv, launch, caps, lines(script))
	if err != nil {
		return nil, err
	}
	res := &ScenarioResult{Name: name, Got: got}
	res.compare(a, "agent", update)
	t := newTally()
	analyze(t, schema, caps, es)
	for _, f := range t.findings {
		if checkDef(f.check).Level != Mandatory {
			continue
		}
		o := Offence{Run: name, Why: f.check + ": " + f.why}
		if f.entry != nil {
			o.Seq, o.Dir, o.Message = f.entry.Seq, f.entry.Dir.String(), f.entry.Line
		}
		res.Offences = append(res.Offences, o)
	}
	return res, nil
}

// replay is what a scenario's run is in either protocol version: the
// workspace and scenario directory made from the archive (prepareScenario),
// the agent launched with {scenario} in argv replaced, the script played
// by an editor with caps and the archive's answers, and the agent's output
// normalized, with the (fresh, so unstable) scenario directory as
// $SCENARIO. It returns that output and the trace it came from.
func replay(ctx context.Context, name string, a *Archive, argv []string, launch func([]string) Launcher, caps Caps, script []string) (string, []*Entry, error) {
	sc, err := prepareScenario(name, a)
	if err != nil {
		return "", nil, err
	}
	defer sc.remove()
	args := make([]string, len(argv))
	for i, s := range argv {
		args[i] = strings.ReplaceAll(s, "{scenario}", sc.dir)
	}
	ed := newEditor(caps, sc.ws)
	ed.answers = sc.answers
	c, err := dial(ctx, launch(args), ed.serve)
	if err != nil {
		return "", nil, err
	}
	play := &player{c: c, ed: ed, ws: sc.ws, timeout: 30 * time.Second}
	perr := play.run(ctx, script)
	c.quiet(ctx, 300*time.Millisecond, 10*time.Second)
	c.close(5 * time.Second)
	ed.term.closeAll()
	if perr != nil {
		return "", nil, fmt.Errorf("%s: %w; %s", name, perr, strings.TrimSpace(c.p.Stderr()))
	}
	es := c.trace.Entries()
	return strings.ReplaceAll(normalize(es, sc.ws), sc.dir, "$SCENARIO"), es, nil
}

// scenarioFiles is an archive laid out for a run: the workspace with its
// files/ sections, the scenario directory with its other files, and the
// scripted answers.
type scenarioFiles struct {
	ws, dir string
	answers []Answer
}

func (sc *scenarioFiles) remove() {
	os.RemoveAll(sc.ws)
	os.RemoveAll(sc.dir)
}

// prepareScenario lays archive a out for a run; the caller removes it.
func prepareScenario(name string, a *Archive) (_ *scenarioFiles, err error) {
	sc := &scenarioFiles{}
	defer func() {
		if err != nil {
			sc.remove()
		}
	}()
	if sc.ws, err = NewWorkspace(); err != nil {
		return nil, err
	}
	if sc.dir, err = os.MkdirTemp("", "acp-conform-scenario-"); err != nil {
		return nil, err
	}
	for _, f := range a.Files {
		switch {
		case f.Name == "client" || f.Name == "agent" || f.Name == V2Golden:
		case f.Name == "answers":
			for i, line := range lines(f.Data) {
				var an Answer
				if err := json.Unmarshal([]byte(line), &an); err != nil || an.Method == "" {
					return nil, fmt.Errorf("%s: answers line %d: want {\"method\", \"result\"|\"error\"}: %v", name, i+1, err)
				}
				sc.answers = append(sc.answers, an)
			}
		case strings.HasPrefix(f.Name, "files/"):
			if err := writeFile(sc.ws, strings.TrimPrefix(f.Name, "files/"), f.Data); err != nil {
				return nil, err
			}
		default:
			if err := writeFile(sc.dir, f.Name, f.Data); err != nil {
				return nil, err
			}
		}
	}
	return sc, nil
}

// compare sets Want from the archive's golden section and Diff from Got;
// with update a differing golden is rewritten in a instead.
func (r *ScenarioResult) compare(a *Archive, section string, update bool) {
	want, _ := a.File(section)
	r.Want = string(want)
	if d := lineDiff(r.Want, r.Got); d != "" {
		if update {
			a.Set(section, []byte(r.Got))
			r.Updated, r.Want = true, r.Got
		} else {
			r.Diff = d
		}
	}
}

func writeFile(root, rel string, data []byte) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return fmt.Errorf("scenario file %q escapes its directory", rel)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// lines returns the non-blank lines that are not # comments.
func lines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// capsOf reads the client capabilities of the script's initialize, so the
// checks know what the agent may call.
func capsOf(script []byte) Caps {
	for _, l := range lines(script) {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Caps struct {
					FS struct {
						Read  bool `json:"readTextFile"`
						Write bool `json:"writeTextFile"`
					} `json:"fs"`
					Terminal    bool            `json:"terminal"`
					Elicitation json.RawMessage `json:"elicitation"`
					Session     struct {
						Notices    json.RawMessage `json:"notices"`
						Compaction json.RawMessage `json:"compaction"`
					} `json:"session"`
					Meta struct {
						TerminalOutput      bool `json:"terminal_output"`
						TerminalOutputDelta bool `json:"terminal_output_delta"`
					} `json:"_meta"`
				} `json:"clientCapabilities"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Method == "initialize" {
			c := m.Params.Caps
			set := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" && string(raw) != "false" }
			return Caps{FS: c.FS.Read || c.FS.Write, Terminal: c.Terminal, TerminalOutput: c.Meta.TerminalOutput,
				Elicitation: set(c.Elicitation), TerminalOutputDelta: c.Meta.TerminalOutputDelta,
				Notices: set(c.Session.Notices), Compaction: set(c.Session.Compaction)}
		}
	}
	return Caps{}
}

// player plays a client script.
type player struct {
	c       *conn
	ed      *editor
	ws      string
	timeout time.Duration

	sessions []string
	pending  map[string]<-chan *Msg
}

// session is the last session the agent created: the one !hold means.
func (p *player) session() string {
	if len(p.sessions) == 0 {
		return ""
	}
	return p.sessions[len(p.sessions)-1]
}

// substitute fills in $CWD and the session ids: $SESSION is the first
// session, $SESSION2 the second, and so on, as in the agent section.
func (p *player) substitute(line string) string {
	line = strings.ReplaceAll(line, "$CWD", p.ws)
	for i := len(p.sessions); i >= 2; i-- { // $SESSION12 before $SESSION1
		line = strings.ReplaceAll(line, fmt.Sprintf("$SESSION%d", i), p.sessions[i-1])
	}
	if len(p.sessions) > 0 {
		line = strings.ReplaceAll(line, "$SESSION", p.sessions[0])
	}
	return line
}

func (p *player) learn(m *Msg) {
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if m != nil && json.Unmarshal(m.Result, &r) == nil && r.SessionID != "" && !slices.Contains(p.sessions, r.SessionID) {
		p.sessions = append(p.sessions, r.SessionID)
	}
}

func (p *player) await(ctx context.Context, id string) error {
	ch := p.pending[id]
	if ch == nil {
		return fmt.Errorf("!wait response %s: no such request outstanding", id)
	}
	delete(p.pending, id)
	m, err := p.c.await(ctx, ch, p.timeout)
	if err != nil {
		return fmt.Errorf("request %s: %w", id, err)
	}
	p.learn(m)
	return nil
}

func (p *player) run(ctx context.Context, script []string) error {
	p.pending = map[string]<-chan *Msg{}
	async := false
	for i, line := range script {
		if strings.HasPrefix(line, "!") {
			if err := p.directive(ctx, strings.Fields(line[1:]), &async); err != nil {
				return fmt.Errorf("client line %d %q: %w", i+1, line, err)
			}
			continue
		}
		line = p.substitute(line)
		var m Msg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			// Not JSON on purpose: the agent sees the raw line.
			if err := p.c.sendRaw([]byte(line), true); err != nil {
				return err
			}
			continue
		}
		if m.IsRequest() {
			req, err := p.c.requestLine(m.ID, []byte(line), false)
			if err != nil {
				return err
			}
			p.pending[req.id] = req.ch
			if !async {
				if err := p.await(ctx, idKey(m.ID)); err != nil {
					return err
				}
			}
			async = false
			continue
		}
		if err := p.c.sendRaw([]byte(line), false); err != nil {
			return err
		}
		if m.Method == "session/cancel" {
			p.ed.release(str(params(&m)["sessionId"]))
		}
	}
	ids := make([]string, 0, len(p.pending))
	for id := range p.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := p.await(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

func (p *player) directive(ctx context.Context, f []string, async *bool) error {
	if len(f) == 0 {
		return fmt.Errorf("empty directive")
	}
	from := p.c.trace.Len()
	fromAgent := func(pred func(e *Entry) bool) bool {
		return p.c.waitFor(ctx, p.timeout, func(es []*Entry) bool {
			return slices.ContainsFunc(es[from:], func(e *Entry) bool { return e.Dir == acpschema.FromAgent && e.Msg != nil && pred(e) })
		})
	}
	switch {
	case f[0] == "async":
		*async = true
	case f[0] == "hold":
		p.ed.hold(p.session())
	case f[0] == "sleep" && len(f) == 2:
		d, err := time.ParseDuration(f[1])
		if err != nil {
			return err
		}
		time.Sleep(d)
	case f[0] == "wait" && (len(f) == 2 || len(f) == 3) && f[1] == "update":
		// An update already received since the last message sent counts.
		// "!wait update KIND" waits for that sessionUpdate kind only, so
		// bookkeeping updates (commands, titles) do not satisfy it.
		from = p.lastSent()
		if !fromAgent(func(e *Entry) bool {
			if e.Msg.Method != "session/update" {
				return false
			}
			if len(f) == 2 {
				return true
			}
			var n struct {
				Update struct {
					Kind string `json:"sessionUpdate"`
				} `json:"update"`
			}
			return json.Unmarshal(e.Msg.Params, &n) == nil && n.Update.Kind == f[2]
		}) {
			return fmt.Errorf("no session/update %s within %v", strings.Join(f[2:], ""), p.timeout)
		}
	case f[0] == "wait" && len(f) == 3 && f[1] == "request":
		from = p.lastSent()
		if !fromAgent(func(e *Entry) bool { return e.Msg.IsRequest() && e.Msg.Method == f[2] }) {
			return fmt.Errorf("no %s request within %v", f[2], p.timeout)
		}
	case f[0] == "wait" && len(f) == 3 && f[1] == "response":
		return p.await(ctx, f[2])
	case f[0] == "wait" && len(f) == 2 && f[1] == "idle":
		// ACP v2: every accepted prompt's work has ended (v2.go).
		if !p.c.waitFor(ctx, p.timeout, func(es []*Entry) bool { return idleAll(es) }) {
			return fmt.Errorf("the accepted prompts did not all end (idle state_update) within %v", p.timeout)
		}
	default:
		return fmt.Errorf("unknown directive")
	}
	return nil
}

// lastSent is the entry count when the client last wrote.
func (p *player) lastSent() int {
	es := p.c.trace.Entries()
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Dir == acpschema.ToAgent {
			return i + 1
		}
	}
	return 0
}

// normalize renders the agent's output with run-specific values replaced.
func normalize(es []*Entry, ws string) string {
	var sessions []string
	for _, e := range es {
		if e.Dir == acpschema.FromAgent && e.Msg != nil && e.Msg.IsResponse() {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(e.Msg.Result, &r) == nil && r.SessionID != "" && !slices.Contains(sessions, r.SessionID) {
				sessions = append(sessions, r.SessionID)
			}
		}
	}
	var b strings.Builder
	for _, e := range es {
		if e.Dir != acpschema.FromAgent {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(e.Line))
		dec.UseNumber()
		var v any
		if e.Msg == nil || dec.Decode(&v) != nil {
			b.WriteString("!not-json " + e.Line + "\n")
			continue
		}
		v = scrub(v, "", ws, sessions)
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		b.Write(out.Bytes())
	}
	return b.String()
}

func scrub(v any, key, ws string, sessions []string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = scrub(val, k, ws, sessions)
		}
		if ai, ok := x["agentInfo"].(map[string]any); ok {
			if _, ok := ai["version"]; ok {
				ai["version"] = "$VERSION"
			}
		}
		if _, init := x["protocolVersion"]; init { // v2 names it info
			if ai, ok := x["info"].(map[string]any); ok {
				if _, ok := ai["version"]; ok {
					ai["version"] = "$VERSION"
				}
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = scrub(x[i], key, ws, sessions)
		}
		return x
	case string:
		if i := slices.Index(sessions, x); i >= 0 {
			if i == 0 {
				return "$SESSION"
			}
			return fmt.Sprintf("$SESSION%d", i+1)
		}
		if _, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return "$TIME"
		}
		return strings.ReplaceAll(x, ws, "$CWD")
	}
	return v
}

// lineDiff describes how got differs from want, line by line; "" if equal.
func lineDiff(want, got string) string {
	if strings.TrimSpace(want) == strings.TrimSpace(got) {
		return ""
	}
	w := strings.Split(strings.TrimRight(want, "\n"), "\n")
	g := strings.Split(strings.TrimRight(got, "\n"), "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		fmt.Fprintf(&b, "line %d:\n  - %s\n  + %s\n", i+1, wl, gl)
	}
	return b.String()
}
