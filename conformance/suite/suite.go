package suite

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// Config says what to test and how to drive it. Zero durations take the
// defaults given.
type Config struct {
	Launch Launcher
	Agent  []string // the command, for the report
	Caps   Caps     // what the client advertises in the main run (e.g. ZedCaps)

	// Prompt is the main turn's prompt; it should make the agent use tools.
	Prompt string
	// CancelPrompt starts the turn that is cancelled; it should take a while.
	CancelPrompt string
	// AuthMethod, when set, is sent as authenticate {methodId} after every
	// initialize, for agents that require a login before session/new.
	AuthMethod string
	// Workspace is the session cwd; "" makes a scratch directory with a
	// README.md and a main.go. Either way it must be absolute.
	Workspace string

	Timeout     time.Duration // one request (default 30s)
	TurnTimeout time.Duration // one prompt turn (default 120s)
	CancelAfter time.Duration // cancel this long after the prompt if no update came first (default 2s)
	Grace       time.Duration // quiet window that catches late messages (default 500ms)

	Schema      *acpschema.Schema // nil: acpschema.Default()
	Transcripts bool              // keep every run's transcript in the report
	Logger      *slog.Logger
}

// Defaults for Config.
const (
	DefaultPrompt       = "Read README.md and main.go in the workspace, run `ls` in a terminal, then summarise what you found in two sentences."
	DefaultCancelPrompt = "Count slowly from 1 to 200, one number per line, with a sentence about each number."
)

// Run drives the agent through every check and returns the report. It fails
// only when the suite itself cannot run (no schema, no workspace).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	s, err := newSuite(cfg)
	if err != nil {
		return nil, err
	}
	defer s.cleanup()
	s.handshake(ctx)
	s.version(ctx)
	s.turns(ctx)
	s.bare(ctx)
	return s.report(), nil
}

type suite struct {
	cfg     Config
	schema  *acpschema.Schema
	log     *slog.Logger
	started time.Time
	tally   *tally
	res     map[string]*outcome
	cleanup func()

	agentInfo any
	agentCaps map[string]json.RawMessage
	trans     map[string][]string
}

// outcome accumulates one check over the runs.
type outcome struct {
	passes   []string
	skips    []string
	offences []Offence
}

func newSuite(cfg Config) (*suite, error) {
	if cfg.Launch == nil {
		return nil, fmt.Errorf("suite: no agent to launch")
	}
	if cfg.Prompt == "" {
		cfg.Prompt = DefaultPrompt
	}
	if cfg.CancelPrompt == "" {
		cfg.CancelPrompt = DefaultCancelPrompt
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Timeout, 30*time.Second)
	def(&cfg.TurnTimeout, 120*time.Second)
	def(&cfg.CancelAfter, 2*time.Second)
	def(&cfg.Grace, 500*time.Millisecond)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &suite{cfg: cfg, log: cfg.Logger, started: time.Now(), tally: newTally(),
		res: map[string]*outcome{}, cleanup: func() {}, trans: map[string][]string{}}
	s.schema = cfg.Schema
	if s.schema == nil {
		sch, err := acpschema.Default()
		if err != nil {
			return nil, err
		}
		s.schema = sch
	}
	if s.cfg.Workspace == "" {
		dir, err := NewWorkspace()
		if err != nil {
			return nil, err
		}
		s.cfg.Workspace = dir
		s.cleanup = func() { os.RemoveAll(dir) }
	}
	if !filepath.IsAbs(s.cfg.Workspace) {
		return nil, fmt.Errorf("suite: workspace %q is not absolute", s.cfg.Workspace)
	}
	return s, nil
}

// workspaceFiles is the scratch project's files. A Go file is stored as
// NAME.go.sample, so it is not part of this package.
//
//go:embed workspace
var workspaceFiles embed.FS

// NewWorkspace makes a scratch project for the agent to look at.
func NewWorkspace() (string, error) {
	dir, err := os.MkdirTemp("", "acp-conform-")
	if err != nil {
		return "", err
	}
	// Resolve symlinks (macOS /var → /private/var) so the paths the agent
	// reports compare equal to ours.
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	for name, stored := range map[string]string{"README.md": "README.md", "main.go": "main.go.sample"} {
		body, err := workspaceFiles.ReadFile("workspace/" + stored)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func (s *suite) o(id string) *outcome {
	if s.res[id] == nil {
		s.res[id] = &outcome{}
	}
	return s.res[id]
}

func (s *suite) pass(id, detail string, args ...any) {
	s.o(id).passes = append(s.o(id).passes, fmt.Sprintf(detail, args...))
}

func (s *suite) skip(id, why string, args ...any) {
	s.o(id).skips = append(s.o(id).skips, fmt.Sprintf(why, args...))
}

func (s *suite) fail(id, run string, e *Entry, why string, args ...any) {
	o := Offence{Run: run, Why: fmt.Sprintf(why, args...)}
	if e != nil {
		o.Seq, o.Dir, o.Message = e.Seq, e.Dir.String(), e.Line
	}
	s.o(id).offences = append(s.o(id).offences, o)
}

// run is one agent process of the suite.
type run struct {
	s    *suite
	name string
	caps Caps
	c    *conn
	ed   *editor
	// replayed is the agent text of the main session's load replay, what a
	// fork of it must replay too ("" before a load).
	replayed string
}

// start launches a process; on failure every check in ids is failed.
func (s *suite) start(ctx context.Context, name string, caps Caps) (*run, error) {
	ed := newEditor(caps, s.cfg.Workspace)
	c, err := dial(ctx, s.cfg.Launch, ed.serve)
	if err != nil {
		return nil, err
	}
	s.log.Info("run started", "run", name)
	return &run{s: s, name: name, caps: caps, c: c, ed: ed}, nil
}

// startFor starts one run and, if the agent cannot be started, fails every
// check in ids with the reason (so no check silently skips).
func (s *suite) startFor(ctx context.Context, name string, caps Caps, ids ...string) (*run, bool) {
	r, err := s.start(ctx, name, caps)
	if err != nil {
		for _, id := range ids {
			s.fail(id, name, nil, "cannot start the agent: %v", err)
		}
		return nil, false
	}
	return r, true
}

// end closes the process and runs the trace-wide checks over its transcript.
func (r *run) end() {
	exited, err := r.c.close(5 * time.Second)
	r.ed.term.closeAll()
	if exited {
		r.s.pass(CheckExit, "%s: exited (%v)", r.name, errText(err))
	} else {
		r.s.fail(CheckExit, r.name, nil, "still running 5s after stdin closed; killed")
	}
	es := r.c.trace.Entries()
	analyze(r.s.tally, r.s.schema, r.caps, es)
	for _, f := range r.s.tally.findings {
		r.s.fail(f.check, r.name, f.entry, "%s", f.why)
	}
	r.s.tally.findings = nil
	if r.s.cfg.Transcripts {
		for _, e := range es {
			r.s.trans[r.name] = append(r.s.trans[r.name], e.String())
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// initialize sends initialize with the run's capabilities, then
// authenticate when the suite was given an auth method.
func (r *run) initialize(ctx context.Context, version int) (*Msg, error) {
	m, err := r.c.call(ctx, "initialize", map[string]any{
		"protocolVersion":    version,
		"clientCapabilities": r.caps.JSON(),
		"clientInfo":         map[string]any{"name": "acp-conform", "title": "ACP conformance suite", "version": "1"},
	}, r.s.cfg.Timeout)
	if err != nil || m.Error != nil || r.s.cfg.AuthMethod == "" {
		return m, err
	}
	a, err := r.c.call(ctx, "authenticate", map[string]any{"methodId": r.s.cfg.AuthMethod}, r.s.cfg.Timeout)
	if err == nil && a.Error != nil {
		err = fmt.Errorf("authenticate %q: %w", r.s.cfg.AuthMethod, a.Error)
	}
	if err != nil {
		r.s.log.Warn("authenticate failed", "run", r.name, "err", err)
	}
	return m, nil
}

// entryOf finds the trace entry of a received message, for offences.
func (r *run) entryOf(m *Msg) *Entry {
	if m == nil {
		return nil
	}
	for _, e := range r.c.trace.Entries() {
		if e.Msg == m {
			return e
		}
	}
	return nil
}

func (r *run) stderrTail() string {
	t := strings.TrimSpace(r.c.p.Stderr())
	if len(t) > 600 {
		t = "…" + t[len(t)-600:]
	}
	if t == "" {
		return "(no stderr)"
	}
	return "stderr: " + t
}

// newSession creates a session rooted at the workspace.
func (r *run) newSession(ctx context.Context) (string, *Msg, error) {
	m, err := r.c.call(ctx, "session/new", map[string]any{"cwd": r.s.cfg.Workspace, "mcpServers": []any{}}, r.s.cfg.Timeout)
	if err != nil {
		return "", nil, err
	}
	if m.Error != nil {
		return "", m, m.Error
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(m.Result, &res) != nil || res.SessionID == "" {
		return "", m, fmt.Errorf("session/new result has no sessionId")
	}
	return res.SessionID, m, nil
}

func textPrompt(session, text string) map[string]any {
	return map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

// handshake: version 1, unknown methods and notifications, bad params, a
// relative cwd, a prompt for an unknown session.
func (s *suite) handshake(ctx context.Context) {
	const name = "handshake"
	ids := []string{CheckInitVersion, CheckUnknownMethod, CheckUnknownNotif, CheckBadParams, CheckSessionNew, CheckRelativeCwd, CheckUnknownSession, CheckDeleteUnknown}
	r, ok := s.startFor(ctx, name, s.cfg.Caps, ids...)
	if !ok {
		return
	}
	defer r.end()
	m, err := r.initialize(ctx, 1)
	switch {
	case err != nil:
		s.fail(CheckInitVersion, name, nil, "initialize: %v; %s", err, r.stderrTail())
	case m.Error != nil:
		s.fail(CheckInitVersion, name, r.entryOf(m), "initialize answered an error")
	default:
		var res struct {
			ProtocolVersion   *int                       `json:"protocolVersion"`
			AgentInfo         any                        `json:"agentInfo"`
			AgentCapabilities map[string]json.RawMessage `json:"agentCapabilities"`
		}
		_ = json.Unmarshal(m.Result, &res)
		s.agentInfo, s.agentCaps = res.AgentInfo, res.AgentCapabilities
		if res.ProtocolVersion == nil || *res.ProtocolVersion != 1 {
			s.fail(CheckInitVersion, name, r.entryOf(m), "the agent did not answer protocolVersion 1 to a client speaking 1")
		} else {
			s.pass(CheckInitVersion, "answered protocolVersion 1")
		}
	}
	if err != nil || m.Error != nil {
		for _, id := range ids[1:] {
			s.skip(id, "initialize failed")
		}
		return
	}

	// Unknown requests: -32601, whether or not they look like extensions.
	for _, method := range []string{"acp_conform/no_such_method", "_acp_conform/no_such_method"} {
		m, err := r.c.callAs(ctx, method, map[string]any{}, s.cfg.Timeout, true)
		switch {
		case err != nil:
			s.fail(CheckUnknownMethod, name, nil, "%s: %v", method, err)
		case m.Error == nil:
			s.fail(CheckUnknownMethod, name, r.entryOf(m), "%s answered a result, want error -32601", method)
		case m.Error.Code != CodeMethodNotFound:
			s.fail(CheckUnknownMethod, name, r.entryOf(m), "%s answered error %d, want -32601", method, m.Error.Code)
		default:
			s.pass(CheckUnknownMethod, "%s: -32601", method)
		}
	}

	// Unknown notifications: no answer at all, and the agent still serves.
	before := r.c.trace.Len()
	for _, method := range []string{"_acp_conform/notice", "acp_conform/notice"} {
		_ = r.c.notify(method, map[string]any{"note": "ignore me"}, true)
	}
	r.c.quiet(ctx, s.cfg.Grace, s.cfg.Timeout)
	answered := false
	for _, e := range r.c.trace.Entries()[before:] {
		if e.Dir == acpschema.FromAgent && e.Msg != nil && e.Msg.IsResponse() {
			s.fail(CheckUnknownNotif, name, e, "a response after unknown notifications: notifications are never answered")
			answered = true
		}
	}

	// A line that is not JSON: -32700 with a null id, and no crash.
	before = r.c.trace.Len()
	_ = r.c.sendRaw([]byte(`{"jsonrpc":"2.0","id":`), true)
	r.c.quiet(ctx, s.cfg.Grace, s.cfg.Timeout)
	parseAnswered := false
	for _, e := range r.c.trace.Entries()[before:] {
		if e.Dir == acpschema.FromAgent && e.Msg != nil && e.Msg.IsResponse() && !hasID(e.Msg.ID) {
			parseAnswered = true
			if e.Msg.Error == nil || e.Msg.Error.Code != -32700 {
				s.fail(CheckParseError, name, e, "want error -32700 for a line that is not JSON")
			}
		}
	}
	if !parseAnswered {
		s.fail(CheckParseError, name, nil, "no -32700 error (id null) for a line that is not JSON")
	}

	sid, sm, err := r.newSession(ctx)
	if err != nil {
		s.fail(CheckSessionNew, name, r.entryOf(sm), "session/new: %v", err)
		s.fail(CheckUnknownNotif, name, nil, "the agent did not serve session/new after the unknown notifications: %v", err)
		s.fail(CheckParseError, name, nil, "the agent did not serve session/new after a line that is not JSON: %v", err)
	} else {
		s.pass(CheckSessionNew, "session %s", sid)
		if parseAnswered {
			s.pass(CheckParseError, "-32700, then session/new still served")
		}
		if !answered {
			s.pass(CheckUnknownNotif, "ignored; session/new still served")
		}
	}

	// Ill-typed params: -32602. Sent deliberately against the schema.
	bad := []struct {
		method string
		params any
	}{
		{"session/new", map[string]any{"cwd": 42, "mcpServers": []any{}}},
		{"session/new", map[string]any{"cwd": s.cfg.Workspace, "mcpServers": "none"}},
	}
	if sid != "" {
		bad = append(bad, struct {
			method string
			params any
		}{"session/prompt", map[string]any{"sessionId": sid, "prompt": "not an array"}})
	}
	for _, b := range bad {
		req, err := r.c.request(b.method, b.params, true)
		if err != nil {
			s.fail(CheckBadParams, name, nil, "%s: %v", b.method, err)
			continue
		}
		m, err := r.c.await(ctx, req.ch, s.cfg.Timeout)
		raw, _ := json.Marshal(b.params)
		switch {
		case err != nil:
			s.fail(CheckBadParams, name, nil, "%s %s: %v", b.method, raw, err)
		case m.Error == nil:
			s.fail(CheckBadParams, name, r.entryOf(m), "%s %s succeeded, want error -32602", b.method, raw)
		case m.Error.Code != CodeInvalidParams:
			s.fail(CheckBadParams, name, r.entryOf(m), "%s %s answered %d, want -32602", b.method, raw, m.Error.Code)
		default:
			s.pass(CheckBadParams, "%s %s: -32602", b.method, raw)
		}
	}

	// A relative cwd is not a session root.
	m, err = r.c.call(ctx, "session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}}, s.cfg.Timeout)
	switch {
	case err != nil:
		s.fail(CheckRelativeCwd, name, nil, "session/new with a relative cwd: %v", err)
	case m.Error == nil:
		s.fail(CheckRelativeCwd, name, r.entryOf(m), "session/new accepted cwd \"relative/dir\"; the cwd must be absolute")
	case m.Error.Code != CodeInvalidParams:
		s.fail(CheckRelativeCwd, name, r.entryOf(m), "rejected with %d, want -32602", m.Error.Code)
	default:
		s.pass(CheckRelativeCwd, "rejected with -32602")
	}

	// A prompt for a session that does not exist.
	m, err = r.c.call(ctx, "session/prompt", textPrompt("acp-conform-no-such-session", "Hello"), s.cfg.TurnTimeout)
	switch {
	case err != nil:
		s.fail(CheckUnknownSession, name, nil, "%v", err)
	case m.Error == nil:
		s.fail(CheckUnknownSession, name, r.entryOf(m), "a prompt for an unknown session succeeded")
	default:
		s.pass(CheckUnknownSession, "error %d", m.Error.Code)
	}

	// Deleting what is not there is done already (acp-tck ACP-DELETE-002).
	if !capObject(s.agentCaps, "sessionCapabilities", "delete") {
		s.skip(CheckDeleteUnknown, "the agent does not advertise sessionCapabilities.delete")
		return
	}
	m, err = r.c.call(ctx, "session/delete", map[string]any{"sessionId": "acp-conform-no-such-session"}, s.cfg.Timeout)
	switch {
	case err != nil:
		s.fail(CheckDeleteUnknown, name, nil, "session/delete: %v", err)
	case m.Error != nil:
		s.fail(CheckDeleteUnknown, name, r.entryOf(m), "session/delete of an unknown id answered error %d: it must succeed silently", m.Error.Code)
	default:
		s.pass(CheckDeleteUnknown, "unknown id: success")
	}
}

// version: a client asking for a version the agent does not speak gets the
// agent's own version back (acp-tck ACP-INIT-003), not an echo.
func (s *suite) version(ctx context.Context) {
	const name, asked = "version", 999
	r, ok := s.startFor(ctx, name, s.cfg.Caps, CheckInitUnsupported)
	if !ok {
		return
	}
	defer r.end()
	m, err := r.initialize(ctx, asked)
	switch {
	case err != nil:
		s.fail(CheckInitUnsupported, name, nil, "initialize with protocolVersion %d: %v; %s", asked, err, r.stderrTail())
	case m.Error != nil:
		s.fail(CheckInitUnsupported, name, r.entryOf(m), "answered an error; the agent must answer with the latest version it supports")
	default:
		var res struct {
			ProtocolVersion int `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Result, &res)
		switch {
		case res.ProtocolVersion == asked:
			s.fail(CheckInitUnsupported, name, r.entryOf(m), "echoed protocolVersion %d, which it cannot speak", asked)
		case res.ProtocolVersion < 1:
			s.fail(CheckInitUnsupported, name, r.entryOf(m), "answered protocolVersion %d", res.ProtocolVersion)
		default:
			s.pass(CheckInitUnsupported, "asked %d, answered %d", asked, res.ProtocolVersion)
		}
	}
}

// report turns the outcomes into results, in the order of Checks.
func (s *suite) report() *Report {
	rep := &Report{Agent: s.cfg.Agent, AgentInfo: s.agentInfo, ClientCaps: s.cfg.Caps.JSON(), Started: s.started}
	for _, d := range Checks {
		res := Result{ID: d.ID, Level: d.Level, Description: d.Description}
		o := s.res[d.ID]
		n := s.tally.examined[d.ID]
		switch {
		case o != nil && len(o.offences) > 0:
			res.Status, res.Offences = Fail, o.offences
		case o != nil && len(o.passes) > 0:
			res.Status, res.Detail = Pass, strings.Join(o.passes, "; ")
		case n > 0:
			res.Status, res.Detail = Pass, fmt.Sprintf("%d messages examined", n)
		case o != nil && len(o.skips) > 0:
			res.Status, res.Detail = Skip, strings.Join(o.skips, "; ")
		default:
			res.Status, res.Detail = Skip, "nothing to examine: the agent sent no message this check applies to"
		}
		if res.Status == Fail && n > 0 {
			res.Detail = fmt.Sprintf("%d of %d messages examined break it", len(res.Offences), n)
		}
		rep.Results = append(rep.Results, res)
	}
	if s.cfg.Transcripts {
		rep.Transcripts = s.trans
	}
	rep.Duration = time.Since(s.started).Round(time.Millisecond).String()
	rep.finish()
	return rep
}
