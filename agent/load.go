package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/session"
)

// Sessions that outlive the process: every session's events are appended to
// a log in Options.Store, and session/load, session/resume, session/list and
// session/delete work from those logs. Without a store the agent offers none
// of them (Initialize does not advertise them).

var (
	_ acp.SessionLoader  = (*Agent)(nil)
	_ acp.SessionResumer = (*Agent)(nil)
	_ acp.SessionLister  = (*Agent)(nil)
	_ acp.SessionDeleter = (*Agent)(nil)
)

// defaultListPageSize is how many sessions one session/list page holds.
const defaultListPageSize = 50

// newLog gives a new session its log: in the store when there is one. A
// store that cannot take it (disk full, permissions) must not stop the user
// working: the session goes on in memory, and the failure is logged.
func (a *Agent) newLog(id string, roots []string) *session.Log {
	if a.o.Store != nil {
		lg, err := a.o.Store.Create(session.Header{ID: id, Cwd: roots[0], AdditionalDirectories: roots[1:]})
		if err == nil {
			return lg
		}
		// The editor is told, with the first update it is sent: info, not
		// an error on stderr that a client would show a second time.
		a.log.Info("session will not be saved", "session", id, "err", err)
		return session.UnsavedLog(a.o.Now, err)
	}
	return session.NewLog(a.o.Now)
}

// LoadSession folds a stored session's log into a live session, replaying
// every event to the editor through the translator the session then goes on
// with. Every replayed update is written before the response. A session
// already live on this connection is replayed again (the editor lost its
// view of it, or a new one asks): nothing else changes.
func (a *Agent) LoadSession(ctx context.Context, req *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	sp, err := parseSystemPrompt(req.SystemPrompt)
	if err != nil {
		return nil, err
	}
	if a.o.Store == nil {
		return nil, acp.Errorf(acp.CodeMethodNotFound, "sessions are not saved (acp-bridge runs without a state directory), so none can be loaded")
	}
	if err := checkRoots(req.Cwd, req.AdditionalDirectories, req.McpServers); err != nil {
		return nil, err
	}
	live, err := a.liveAt(req.SessionID, req.Cwd)
	if err != nil {
		return nil, err
	}
	if live != nil {
		if err := live.replay(ctx, 1); err != nil {
			return nil, err
		}
		live.mcp.start(ctx, req.McpServers)
		a.log.Info("live session loaded again", "session", live.id, "events", live.log.Len())
		modes, opts := live.ctl.Controls()
		return &acp.LoadSessionResponse{Modes: modes, ConfigOptions: opts}, nil
	}
	s, err := a.restore(ctx, req.SessionID, req.Cwd, req.AdditionalDirectories, req.McpServers, 1)
	if err != nil {
		return nil, err
	}
	s.prompts.setClient(sp)
	a.log.Info("session loaded", "session", s.id, "cwd", s.cwd, "events", s.log.Len())
	modes, opts := s.ctl.Controls()
	return &acp.LoadSessionResponse{Modes: modes, ConfigOptions: opts}, nil
}

// liveAt is the session id when it is live on this connection (nil when
// not), refusing a cwd other than the one it runs in.
func (a *Agent) liveAt(id, cwd string) (*conversation, error) {
	a.mu.Lock()
	live := a.sessions[id]
	a.mu.Unlock()
	if live != nil && filepath.Clean(cwd) != live.cwd {
		return nil, cwdMismatch(id, cwd, live.cwd)
	}
	return live, nil
}

// ResumeSession makes a stored session live again without replaying it: the
// editor already shows the conversation. Resuming a session that is already
// live here is a no-op. A v2 client may ask for a replay from a position
// in the log (req.ReplayFrom: the log's events from that sequence number
// on), and gets the session's current state after it (dialect.go), both
// before the response.
func (a *Agent) ResumeSession(ctx context.Context, req *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	sp, err := parseSystemPrompt(req.SystemPrompt)
	if err != nil {
		return nil, err
	}
	var from int64 // no replay
	if req.ReplayFrom != nil {
		from = max(*req.ReplayFrom, 1)
	}
	live, err := a.liveAt(req.SessionID, req.Cwd)
	if err != nil {
		return nil, err
	}
	s := live
	if live != nil {
		if from > 0 {
			if err := live.replay(ctx, from); err != nil {
				return nil, err
			}
		}
		live.prompts.setClient(sp)
	} else {
		if s, err = a.restore(ctx, req.SessionID, req.Cwd, req.AdditionalDirectories, req.McpServers, from); err != nil {
			return nil, err
		}
		s.prompts.setClient(sp)
		a.log.Info("session resumed", "session", s.id, "cwd", s.cwd, "events", s.log.Len(), "replayFrom", from)
	}
	s.sendState(ctx)
	modes, opts := s.ctl.Controls()
	return &acp.ResumeSessionResponse{Modes: modes, ConfigOptions: opts}, nil
}

func checkRoots(cwd string, dirs []string, servers []acp.McpServer) error {
	if strings.ContainsRune(cwd, 0) {
		return acp.InvalidParams("invalid params: cwd contains a NUL byte")
	}
	if !filepath.IsAbs(cwd) {
		return acp.InvalidParams("invalid params: cwd must be an absolute path, got %q", cwd)
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) || strings.ContainsRune(d, 0) {
			return acp.InvalidParams("invalid params: additionalDirectories must be absolute paths, got %q", d)
		}
	}
	for i, srv := range servers {
		if srv.Name == "" {
			return acp.InvalidParams("invalid params: mcpServers[%d] has no name", i)
		}
	}
	return nil
}

// restore opens a stored session, folds its log into the session's state
// (and, with from > 0, sends what the translator makes of its events from
// sequence number from on), seals a turn a crash cut short, and registers
// the session as live.
func (a *Agent) restore(ctx context.Context, id, cwd string, dirs []string, servers []acp.McpServer, from int64) (_ *conversation, err error) {
	replay := from > 0
	if a.o.Store == nil {
		return nil, acp.Errorf(acp.CodeMethodNotFound, "sessions are not saved (acp-bridge runs without a state directory), so none can be loaded")
	}
	if err := checkRoots(cwd, dirs, servers); err != nil {
		return nil, err
	}
	a.mu.Lock()
	live := a.sessions[id] != nil
	caps := a.caps
	a.mu.Unlock()
	if live {
		return nil, acp.InvalidParams("invalid params: session %s became live while it was loading", id)
	}
	lg, h, err := a.openHeld(ctx, id) // handover.go
	if err != nil {
		return nil, loadError(id, err)
	}
	if a.o.SweepTempFiles != nil {
		// The session may have been cut short by a kill mid-edit.
		a.o.SweepTempFiles()
	}
	a.mu.Lock()
	delete(a.moved, id) // taken back, if it had been handed over
	a.mu.Unlock()
	defer func() {
		// A corrupt log must never take the process down: a panic while
		// folding or replaying fails this request and frees the log.
		if r := recover(); r != nil {
			a.log.Error("session load panicked", "session", id, "panic", r)
			err = acp.Errorf(acp.CodeInternalError, "session %s could not be loaded: %v", id, r)
		}
		if err != nil {
			lg.Close()
		}
	}()
	if filepath.Clean(cwd) != h.Cwd {
		return nil, cwdMismatch(id, cwd, h.Cwd)
	}
	roots := []string{h.Cwd}
	if len(dirs) == 0 {
		dirs = h.AdditionalDirectories
	}
	for _, d := range dirs {
		roots = append(roots, filepath.Clean(d))
	}

	s := newSession(a, id, roots, caps, lg, true)
	if err := s.foldLog(ctx, from); err != nil {
		return nil, err
	}
	s.tellSkipped(ctx, replay)
	if sealed := s.seal(ctx, replay); sealed > 0 {
		a.log.Info("session was cut short by an earlier process; its open turn is closed", "session", id, "events", sealed) // seal's notice tells the user
	}
	s.tr.EndReplay()

	if err := a.admit(s); err != nil {
		return nil, err // the deferred close frees the log
	}
	// Like session/new: the command catalog once the response is out (the
	// first prompt waits for it), and the editor's MCP servers.
	s.announced.afterReply(ctx)
	s.mcp.start(ctx, servers)
	return s, nil
}

// replay sends a live session's log again as session/load shows it,
// through a fresh translator: the live one keeps its own state, and the
// session's state does not change. Events wait meanwhile, so the replay
// is a consistent prefix and nothing of it follows the response.
func (s *conversation) replay(ctx context.Context, from int64) error {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	return s.sendLog(ctx, s.newTranslator(true).Translate, from)
}

// hiddenOnReplay are the indexes of the events a replay leaves out, so a
// reloaded thread shows what the live one ended up showing: the answer
// chunks a later AttemptAbandoned voids (those of the same model request,
// back to the last event that ends or begins one), and the whole
// transcript of a refused turn that completed no tool call. On such a
// refusal the editor removes the user's message and everything after it
// from the thread (the schema's stopReason "refusal": "this should be
// reflected in the UI"; Zed truncates unless a tool call completed), and
// the model's context drops the turn too (state.apply, TurnEnd). What is
// not transcript (controls, title, plan, usage) is replayed as it came.
// What a rewind took back is left out too (its transcript and plans).
func hiddenOnReplay(evs []session.Event, tools mapping.Tools) map[int]bool {
	var void map[int]bool
	hide := func(i int) {
		if void == nil {
			void = map[int]bool{}
		}
		void[i] = true
	}
	turnFrom := -1
	var succeeded []string // call ids of the turn's successful results
	for i, ev := range evs {
		switch p := ev.Payload.(type) {
		case session.TurnStart:
			turnFrom, succeeded = i, succeeded[:0]
			if i > 0 {
				if _, ok := evs[i-1].Payload.(session.UserMessage); ok {
					turnFrom = i - 1
				}
			}
		case session.ToolResult:
			if !p.Result.IsError {
				succeeded = append(succeeded, p.CallID)
			}
		case session.TurnEnd:
			if p.StopReason == string(acp.StopRefusal) && turnFrom >= 0 && !keptTurn(evs[turnFrom:i], succeeded, tools) {
				for j := turnFrom; j <= i; j++ {
					if transcript(evs[j].Payload) {
						hide(j)
					}
				}
			}
			turnFrom = -1
		case session.Rewind:
			// What a rewind took back leaves the thread as it left the
			// model's context (rewind.go): the editor that asked removed it.
			from := p.Before // the first event taken back
			if p.After > 0 {
				from = p.After + 1
			}
			if from <= 0 {
				break // names no message (the fold ignores it too)
			}
			until := p.Until
			if until == 0 {
				until = ev.Seq
			}
			for j := i - 1; j >= 0 && evs[j].Seq >= from; j-- {
				if evs[j].Seq < until && rewound(evs[j].Payload) {
					hide(j)
				}
			}
		case session.AttemptAbandoned:
		back:
			for j := i - 1; j >= 0; j-- {
				switch evs[j].Payload.(type) {
				case session.AssistantChunk:
					hide(j)
				case session.AssistantMessage, session.ToolResult, session.TurnStart, session.UserContext, session.AttemptAbandoned:
					break back
				}
			}
		}
	}
	return void
}

// keptTurn reports whether a refused turn stays in the editor's thread:
// when one of its calls that succeeded had a card, which the editor showed
// as completed.
func keptTurn(turn []session.Event, succeeded []string, tools mapping.Tools) bool {
	for _, ev := range turn {
		if c, ok := ev.Payload.(session.ToolCall); ok && slices.Contains(succeeded, c.CallID) && mapping.Carded(tools, c) {
			return true
		}
	}
	return false
}

// rewound reports whether a replay leaves an event out when a rewind took
// it back: the transcript, and the plan its turns made.
func rewound(p session.Payload) bool {
	_, plan := p.(session.Plan)
	return plan || transcript(p)
}

// transcript reports whether an event is part of what the thread shows of
// a turn: the prompt, the answer, the tool calls and the agent's notices.
func transcript(p session.Payload) bool {
	switch p.(type) {
	case session.UserMessage, session.UserSteer, session.AssistantChunk, session.ToolCall, session.ToolStatus,
		session.ToolOutput, session.ToolResult, session.Notice:
		return true
	}
	return false
}

func cwdMismatch(id, got, want string) error {
	return acp.InvalidParams("invalid params: session %s belongs to %s, not %s", id, want, got)
}

// loadError turns a store error into the protocol error the editor sees.
// A corrupt log or an unknown event type is an internal error whose message
// names the file, the line and the cause (session.CorruptError,
// session.UnknownTypeError), so the user can act on it.
func loadError(id string, err error) error {
	var ae *acp.Error
	switch {
	case errors.As(err, &ae):
		return ae // said already (openHeld)
	case errors.Is(err, session.ErrNotFound):
		return &acp.Error{Code: acp.CodeResourceNotFound, Message: "session not found: " + id, Data: map[string]string{"sessionId": id}}
	case errors.Is(err, session.ErrBusy):
		return acp.InvalidParams("invalid params: session %s is open in another acp-bridge process (or another connection); close it there first", id)
	}
	return acp.Errorf(acp.CodeInternalError, "session %s cannot be loaded: %v", id, err)
}

// Interrupted calls are failed with this code when a session is reopened.
const codeInterrupted = "INTERRUPTED"

// seal closes what a crash left open, from the folded state: every tool
// call without a result gets a failed one (a call the model asked for that
// never started gets its card first), and an open turn gets its end. The
// events are logged, so the next load finds the session whole. It returns
// how many it added.
func (s *conversation) seal(ctx context.Context, send bool) int {
	n := s.closeOpen(ctx, send, codeInterrupted,
		"the call was interrupted: acp-bridge stopped before it finished, so it may have run only in part",
		"the call never ran: acp-bridge stopped before it started")
	s.mu.Lock()
	turn := s.st.inTurn
	s.mu.Unlock()
	if turn > 0 {
		s.record(ctx, session.New(session.Notice{Text: "\n\n[acp-bridge stopped during this turn; it did not finish.]\n\n",
			Severity: acp.NoticeWarning, Title: "This turn did not finish", Description: "acp-bridge stopped during it."}), send)
		s.record(ctx, session.New(session.TurnEnd{Turn: turn, StopReason: string(acp.StopCancelled)}), send)
		n += 2
	}
	return n
}

// ListSessions lists stored sessions, most recently updated first, a page at
// a time. The cursor names the last session of the previous page, so pages
// stay consistent while sessions are added.
func (a *Agent) ListSessions(ctx context.Context, req *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	if a.o.Store == nil {
		return nil, acp.Errorf(acp.CodeMethodNotFound, "sessions are not saved (acp-bridge runs without a state directory), so there are none to list")
	}
	if req.Cwd != "" && !filepath.IsAbs(req.Cwd) {
		return nil, acp.InvalidParams("invalid params: cwd must be an absolute path, got %q", req.Cwd)
	}
	var after *listCursor
	if req.Cursor != "" {
		c, err := decodeCursor(req.Cursor)
		if err != nil {
			return nil, acp.InvalidParams("invalid params: cursor %q is not one this agent returned", req.Cursor)
		}
		after = &c
	}
	infos, err := a.o.Store.List()
	if err != nil {
		return nil, acp.Errorf(acp.CodeInternalError, "listing sessions failed: %v", err)
	}
	size := a.o.ListPageSize
	if size <= 0 {
		size = defaultListPageSize
	}
	switch req.Archived {
	case "", acp.ArchivedExclude, acp.ArchivedInclude, acp.ArchivedOnly:
	default:
		return nil, acp.InvalidParams("invalid params: archived must be %q, %q or %q, not %q", acp.ArchivedExclude, acp.ArchivedInclude, acp.ArchivedOnly, req.Archived)
	}
	resp := &acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	var last session.Info
	for _, in := range infos {
		if req.Cwd != "" && in.Cwd != filepath.Clean(req.Cwd) {
			continue
		}
		if after != nil && !after.before(in) {
			continue
		}
		if in.Archived && (req.Archived == "" || req.Archived == acp.ArchivedExclude) || !in.Archived && req.Archived == acp.ArchivedOnly {
			continue
		}
		if len(resp.Sessions) == size {
			resp.NextCursor = encodeCursor(listCursor{ID: last.ID, Updated: last.Updated})
			break
		}
		resp.Sessions = append(resp.Sessions, acp.SessionInfo{
			SessionID:             in.ID,
			Cwd:                   in.Cwd,
			Title:                 in.Title,
			UpdatedAt:             in.Updated.UTC().Format(time.RFC3339Nano),
			AdditionalDirectories: in.AdditionalDirectories,
			Archived:              in.Archived,
		})
		last = in
	}
	return resp, nil
}

// listCursor is the position after one listed session in the list's order
// (most recently updated first, then by id).
type listCursor struct {
	ID      string    `json:"id"`
	Updated time.Time `json:"updated"`
}

// before reports whether in comes after the cursor's session in list order.
func (c listCursor) before(in session.Info) bool {
	if d := in.Updated.Compare(c.Updated); d != 0 {
		return d < 0
	}
	return in.ID > c.ID
}

func encodeCursor(c listCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (listCursor, error) {
	var c listCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, err
	}
	if c.ID == "" || c.Updated.IsZero() {
		return c, errors.New("incomplete cursor")
	}
	return c, nil
}

// DeleteSession removes a stored session; a live one is closed first. An
// id with no session is already deleted: that succeeds too.
func (a *Agent) DeleteSession(ctx context.Context, req *acp.DeleteSessionRequest) (*acp.EmptyResponse, error) {
	if a.o.Store == nil {
		return nil, acp.Errorf(acp.CodeMethodNotFound, "sessions are not saved (acp-bridge runs without a state directory), so there are none to delete")
	}
	if s := a.forget(req.SessionID); s != nil {
		s.close(context.Canceled)
	}
	if err := a.o.Store.Delete(req.SessionID); err != nil && !errors.Is(err, session.ErrNotFound) {
		return nil, loadError(req.SessionID, err)
	}
	a.log.Info("session deleted", "session", req.SessionID)
	return &acp.EmptyResponse{}, nil
}
