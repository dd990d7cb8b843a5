package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
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

// persist gives a new session a log in the store. A store that cannot take
// it (disk full, permissions) must not stop the user working: the session
// goes on in memory, and the failure is logged.
func (a *Agent) persist(s *Session) {
	if a.o.Store == nil {
		return
	}
	lg, err := a.o.Store.Create(session.Header{ID: s.id, Cwd: s.cwd, AdditionalDirectories: s.roots[1:]})
	if err != nil {
		a.log.Error("session will not be saved", "session", s.id, "err", err)
		return
	}
	s.log = lg
}

// release closes a session's log once the session is closed. A log that
// never got an event is removed: an editor opens a session per new thread,
// and most of those are never prompted.
func (a *Agent) release(s *Session) {
	if err := s.log.Close(); err != nil {
		a.log.Warn("closing the session log failed", "session", s.id, "err", err)
	}
	if a.o.Store != nil && s.log.Persistent() && s.log.Len() == 0 {
		if err := a.o.Store.Delete(s.id); err != nil && !errors.Is(err, session.ErrNotFound) {
			a.log.Warn("removing an empty session log failed", "session", s.id, "err", err)
		}
	}
}

// LoadSession rebuilds a stored session, replays it to the editor through a
// fresh translator (the same one that rendered it live), and makes it live.
// Every replayed update is written before the response. A session already
// live on this connection is replayed as it stands (a client that lost its
// view asks for it again; the official kit requires it).
func (a *Agent) LoadSession(ctx context.Context, req *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	sp, err := parseSystemPrompt(req.SystemPrompt)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	live := a.sessions[req.SessionID]
	a.mu.Unlock()
	if live != nil {
		if filepath.Clean(req.Cwd) != live.cwd {
			return nil, cwdMismatch(req.SessionID, req.Cwd, live.cwd)
		}
		if err := a.replay(ctx, live, live.log.Events()); err != nil {
			return nil, err
		}
		live.setClientPrompt(sp)
		modes, opts := live.Controls()
		return &acp.LoadSessionResponse{Modes: modes, ConfigOptions: opts}, nil
	}
	s, err := a.restore(ctx, req.SessionID, req.Cwd, req.AdditionalDirectories, req.McpServers, true)
	if err != nil {
		return nil, err
	}
	s.setClientPrompt(sp)
	a.log.Info("session loaded", "session", s.id, "cwd", s.cwd, "events", s.log.Len())
	modes, opts := s.Controls()
	return &acp.LoadSessionResponse{Modes: modes, ConfigOptions: opts}, nil
}

// ResumeSession makes a stored session live again without replaying it: the
// editor already shows the conversation. Resuming a session that is already
// live here is a no-op.
func (a *Agent) ResumeSession(ctx context.Context, req *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	sp, err := parseSystemPrompt(req.SystemPrompt)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	live := a.sessions[req.SessionID]
	a.mu.Unlock()
	if live != nil {
		if filepath.Clean(req.Cwd) != live.cwd {
			return nil, cwdMismatch(req.SessionID, req.Cwd, live.cwd)
		}
		live.setClientPrompt(sp)
		modes, opts := live.Controls()
		return &acp.ResumeSessionResponse{Modes: modes, ConfigOptions: opts}, nil
	}
	s, err := a.restore(ctx, req.SessionID, req.Cwd, req.AdditionalDirectories, req.McpServers, false)
	if err != nil {
		return nil, err
	}
	s.setClientPrompt(sp)
	a.log.Info("session resumed", "session", s.id, "cwd", s.cwd, "events", s.log.Len())
	modes, opts := s.Controls()
	return &acp.ResumeSessionResponse{Modes: modes, ConfigOptions: opts}, nil
}

// restore opens a stored session, seals a turn a crash cut short, rebuilds
// the model's context, replays it when asked, and registers it as live.
func (a *Agent) restore(ctx context.Context, id, cwd string, dirs []string, servers []acp.McpServer, replay bool) (_ *Session, err error) {
	if a.o.Store == nil {
		return nil, acp.Errorf(acp.CodeMethodNotFound, "sessions are not saved (acp-bridge runs without a state directory), so none can be loaded")
	}
	if !filepath.IsAbs(cwd) {
		return nil, acp.InvalidParams("invalid params: cwd must be an absolute path, got %q", cwd)
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, acp.InvalidParams("invalid params: additionalDirectories must be absolute paths, got %q", d)
		}
	}
	for i, srv := range servers {
		if srv.Name == "" {
			return nil, acp.InvalidParams("invalid params: mcpServers[%d] has no name", i)
		}
	}
	a.mu.Lock()
	live := a.sessions[id] != nil
	caps := a.caps
	a.mu.Unlock()
	if live {
		return nil, acp.InvalidParams("invalid params: session %s is already live in this connection; it cannot be loaded again (close it first)", id)
	}
	lg, h, err := a.o.Store.Open(id)
	if err != nil {
		return nil, loadError(id, err)
	}
	defer func() {
		// A corrupt log must never take the process down: a panic while
		// rebuilding or replaying fails this request and frees the log.
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

	s := newSession(a, id, roots, caps)
	s.log = lg
	if sealed := seal(lg); sealed > 0 {
		a.log.Warn("session was cut short by an earlier process; its open turn is closed", "session", id, "events", sealed)
	}
	evs := lg.Events()
	s.history, s.turns = rebuildHistory(evs)
	s.RestoreControls(evs)                    // mode, model, title: as the session left them
	s.restoreGrants(evs)                      // "always allow / reject" answers
	s.clientPrompt = restoreClientPrompt(evs) // not shared yet: no lock
	if replay {
		if err := a.replay(ctx, s, evs); err != nil {
			return nil, err
		}
	}

	a.mu.Lock()
	if a.sessions[id] != nil {
		a.mu.Unlock()
		return nil, acp.InvalidParams("invalid params: session %s became live while it was loading", id)
	}
	a.sessions[id] = s
	a.mu.Unlock()
	// Like session/new: the command catalog once the response is out (the
	// first prompt waits for it), and the editor's MCP servers.
	s.announceAfterReply(ctx)
	s.startMCP(ctx, servers)
	return s, nil
}

// translatorOptions is how a session renders for a client, live and on
// replay alike: what the client said it can show.
func translatorOptions(cwd string, caps acp.ClientCapabilities, replay bool) mapping.Options {
	return mapping.Options{Cwd: cwd, TerminalOutput: caps.TerminalOutput(),
		TerminalOutputDelta: caps.TerminalOutputDelta(), Notices: caps.Notices(), Replay: replay}
}

// replay sends the whole session as the editor saw it live, and the user's
// own messages too, through a fresh translator: a call a crash left open
// must not leave a stale card in the live translator.
func (a *Agent) replay(ctx context.Context, s *Session, evs []session.Event) error {
	tr := mapping.New(s.scope, translatorOptions(s.cwd, s.caps, true))
	for _, ev := range evs {
		for _, u := range tr.Translate(ev) {
			if err := a.client.SessionUpdate(ctx, s.id, u); err != nil {
				return fmt.Errorf("replaying session %s: %w", s.id, err)
			}
		}
	}
	return nil
}

func cwdMismatch(id, got, want string) error {
	return acp.InvalidParams("invalid params: session %s belongs to %s, not %s", id, want, got)
}

// loadError turns a store error into the protocol error the editor sees.
// A corrupt log or an unknown event type is an internal error whose message
// names the file, the line and the cause (session.CorruptError,
// session.UnknownTypeError), so the user can act on it.
func loadError(id string, err error) error {
	switch {
	case errors.Is(err, session.ErrNotFound):
		return &acp.Error{Code: acp.CodeResourceNotFound, Message: "session not found: " + id, Data: map[string]string{"sessionId": id}}
	case errors.Is(err, session.ErrBusy):
		return acp.InvalidParams("invalid params: session %s is open in another acp-bridge process (or another connection); close it there first", id)
	}
	return acp.Errorf(acp.CodeInternalError, "session %s cannot be loaded: %v", id, err)
}

// Interrupted calls are failed with this code when a session is reopened.
const codeInterrupted = "INTERRUPTED"

// seal closes what a crash left open: every tool call without a result gets
// a failed one (a call the model asked for that never started gets its card
// first), and an open turn gets its end. The events are appended to the log,
// so the next load finds the session whole. It returns how many it added.
func seal(lg *session.Log) int {
	evs := lg.Events()
	// Calls are made only inside a turn, and a turn that ended has every
	// call answered (the turn loop fails what is left before it ends), so
	// only the last turn can be open: no need to decode the whole session.
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == session.TypeTurnStart {
			evs = evs[i:]
			break
		}
	}
	carded := map[string]bool{}
	finished := map[string]bool{}
	var open []session.ToolCall // calls without a result, in the order made
	openTurn := 0
	for _, ev := range evs {
		switch ev.Type {
		case session.TypeTurnStart:
			if t, err := session.Decode[session.TurnStart](ev); err == nil {
				openTurn = t.Turn
			}
		case session.TypeTurnEnd:
			openTurn = 0
		case session.TypeAssistantMessage:
			m, err := session.Decode[session.AssistantMessage](ev)
			if err != nil {
				continue
			}
			for _, c := range m.ToolCalls {
				if !finished[c.ID] && !carded[c.ID] {
					open = append(open, session.ToolCall{CallID: c.ID, Name: c.Name, Args: argsJSON(c.Arguments)})
				}
			}
		case session.TypeToolCall:
			c, err := session.Decode[session.ToolCall](ev)
			if err != nil {
				continue
			}
			if !carded[c.CallID] && !finished[c.CallID] && !containsCall(open, c.CallID) {
				open = append(open, c)
			}
			carded[c.CallID] = true
		case session.TypeToolResult:
			// Only the id: a result's content can be large, and is not needed here.
			if r, err := session.Decode[struct {
				CallID string `json:"callId"`
			}](ev); err == nil {
				finished[r.CallID] = true
			}
		}
	}
	added := 0
	for _, c := range open {
		if finished[c.CallID] {
			continue
		}
		msg := "the call was interrupted: acp-bridge stopped before it finished, so it may have run only in part"
		if !carded[c.CallID] {
			lg.Append(session.New(session.TypeToolCall, c))
			added++
			msg = "the call never ran: acp-bridge stopped before it started"
		}
		lg.Append(session.New(session.TypeToolResult, session.ToolResult{CallID: c.CallID, Result: registry.ErrorResult(codeInterrupted, msg)}))
		added++
	}
	if openTurn > 0 {
		lg.Append(session.New(session.TypeNotice, session.Notice{Text: "\n\n[acp-bridge stopped during this turn; it did not finish.]\n\n",
			Severity: acp.NoticeWarning, Title: "This turn did not finish", Description: "acp-bridge stopped during it."}))
		lg.Append(session.New(session.TypeTurnEnd, session.TurnEnd{Turn: openTurn, StopReason: string(acp.StopCancelled)}))
		added += 2
	}
	return added
}

func containsCall(cs []session.ToolCall, id string) bool {
	for _, c := range cs {
		if c.CallID == id {
			return true
		}
	}
	return false
}

// rebuildHistory is the model's context as the live turn loop built it:
// each prompt, each complete model response, and the result of each call
// that response made, in order. It also returns the last turn number.
func rebuildHistory(evs []session.Event) ([]model.Message, int) {
	var history []model.Message
	pending := map[string]bool{} // calls of the last response still without a result
	turns := 0
	prompt := ""       // the last user/message, until it enters the context
	var extra []string // additional context of the results so far
	for _, ev := range evs {
		switch ev.Type {
		case session.TypeUserMessage:
			if m, err := session.Decode[session.UserMessage](ev); err == nil {
				prompt = m.Text
			}
		case session.TypeUserContext:
			history = append(history, model.Message{Role: model.RoleUser, Content: prompt})
		case session.TypeContextReset:
			r, err := session.Decode[session.ContextReset](ev)
			if err != nil {
				continue
			}
			clear(pending)
			history = nil
			if r.Reason == "compact" {
				history = compactedContext(r.Summary)
			}
		case session.TypeAssistantMessage:
			m, err := session.Decode[session.AssistantMessage](ev)
			if err != nil {
				continue
			}
			msg := model.Message{Role: model.RoleAssistant, Content: m.Text, Reasoning: m.Reasoning}
			clear(pending)
			extra = nil
			for _, c := range m.ToolCalls {
				var args json.RawMessage // nil stays nil, as the live message had it
				if c.Arguments != "" {
					args = json.RawMessage(c.Arguments)
				}
				msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
				pending[c.ID] = true
			}
			history = append(history, msg)
		case session.TypeToolResult:
			r, err := session.Decode[storedResult](ev)
			if err != nil || !pending[r.CallID] {
				continue // not a call the model made (or already answered)
			}
			delete(pending, r.CallID)
			history = append(history, model.Message{Role: model.RoleTool, ToolCallID: r.CallID, Content: r.Result.Text()})
			extra = append(extra, r.Result.Context...)
			// Additional context from post-execute policy follows the last
			// result of the response, as the turn loop adds it.
			if len(pending) == 0 && len(extra) > 0 {
				history = append(history, model.Message{Role: model.RoleUser, Content: strings.Join(extra, "\n\n")})
				extra = nil
			}
		case session.TypeTurnStart:
			if t, err := session.Decode[session.TurnStart](ev); err == nil {
				turns = max(turns, t.Turn)
			}
		}
	}
	return history, turns
}

// storedResult reads a tool/result with the additional context a
// post-execute step gave the model (registry.Result.Context on the issue-3
// branch: the outer field reads it where registry.Result has it too).
type storedResult struct {
	CallID string `json:"callId"`
	Result struct {
		registry.Result
		Context []string `json:"context,omitempty"`
	} `json:"result"`
}

// compactedContext is the context /compact leaves: the summary, and the
// model's acknowledgement. cmdCompact builds the same two messages live;
// the two must stay the same for a reload to continue the same conversation.
func compactedContext(summary string) []model.Message {
	return []model.Message{
		{Role: model.RoleUser, Content: "Summary of our conversation so far (the earlier messages were compacted):\n\n" + summary},
		{Role: model.RoleAssistant, Content: "Understood. I will continue from this summary."},
	}
}

// assistantEvent is the log form of a complete model response.
func assistantEvent(msg model.Message) session.Event {
	m := session.AssistantMessage{Text: msg.Content, Reasoning: msg.Reasoning}
	for _, c := range msg.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, session.MessageCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)})
	}
	return session.New(session.TypeAssistantMessage, m)
}

// argsJSON makes a model's arguments safe to log as raw JSON: broken JSON is
// kept as a JSON string, so the card still shows what the model wrote.
func argsJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	q, _ := json.Marshal(s)
	return q
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
	resp := &acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	var last session.Info
	for _, in := range infos {
		if req.Cwd != "" && in.Cwd != filepath.Clean(req.Cwd) {
			continue
		}
		if after != nil && !after.before(in) {
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

// DeleteSession removes a stored session; a live one is closed first.
func (a *Agent) DeleteSession(ctx context.Context, req *acp.DeleteSessionRequest) (*acp.EmptyResponse, error) {
	if a.o.Store == nil {
		return nil, acp.Errorf(acp.CodeMethodNotFound, "sessions are not saved (acp-bridge runs without a state directory), so there are none to delete")
	}
	a.mu.Lock()
	s := a.sessions[req.SessionID]
	delete(a.sessions, req.SessionID)
	a.mu.Unlock()
	if s != nil {
		s.close()
		if err := s.log.Close(); err != nil {
			a.log.Warn("closing the session log failed", "session", s.id, "err", err)
		}
	}
	if err := a.o.Store.Delete(req.SessionID); err != nil {
		if errors.Is(err, session.ErrNotFound) {
			// Never saved, already deleted or never there: gone either way,
			// which is what the client asked for (acp-tck ACP-DELETE-002).
			return &acp.EmptyResponse{}, nil
		}
		return nil, loadError(req.SessionID, err)
	}
	a.log.Info("session deleted", "session", req.SessionID)
	return &acp.EmptyResponse{}, nil
}
