package agent

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// Rewind: taking back a user message and everything after it. A rewind is
// an event (session.Rewind) like any other: the fold gives the model the
// context it had when that message arrived (rewindstate.go), a replay
// leaves the rewound messages out (hiddenOnReplay, load.go), and the answer
// goes out only once the event is on disk (it is synced as it is written,
// session/store.go). The history before the message is the same messages,
// so the next request starts with the same bytes as before and the
// endpoint's prompt cache still holds it. The files the agent's tools
// changed are put back by a rewind of the files (rewindfiles.go), itself
// logged. Usage and cost already spent stay.
//
// The ways in: `_session/rewind` (conversation only, as the AIR extension's
// contract says) and `_session/rewind_files`; /rewind and /undo
// (rewindcmd.go), which do both; on v2, session/rewind and
// session/edit_prompt (rewindv2.go); and session/fork at a message
// (fork.go).

var _ acp.SessionRewinder = (*Agent)(nil)

// rewinder is a session's rewinds: finding the message, logging the
// rewind, planning and putting back the files (rewindfiles.go), the
// commands (rewindcmd.go). It reads the folded state through marks and
// writes only by emitting events; holding the turn is the
// conversation's (holdTurn, takeTurn).
type rewinder struct {
	id, cwd string
	// events are the session's log; saved is nil once what was logged is
	// on disk (or the session is not stored), else why it is not.
	events func() []session.Event
	saved  func() error
	files  *Files
	logger *slog.Logger
	scope  *registry.Scope
	emit   func(ctx context.Context, ev session.Event)
	// marks are the user messages of the conversation, oldest first (a copy).
	marks func() []promptMark
	// replaying is a fresh translator of the session's dialect, in replay
	// mode (the ids the editor has: rewindv2.go).
	replaying func() translator
}

// newRewinder is s's rewinder.
func newRewinder(s *conversation) *rewinder {
	return &rewinder{id: s.id, cwd: s.cwd, files: s.files, logger: s.a.log, scope: s.scope, emit: s.emit,
		events: func() []session.Event { return s.log.Events() },
		saved: func() error {
			if !s.log.Persistent() {
				return nil
			}
			return s.log.Err()
		},
		marks: func() []promptMark {
			s.mu.Lock()
			defer s.mu.Unlock()
			return append([]promptMark(nil), s.st.prompts...)
		},
		replaying: func() translator { return s.newTranslator(true) }}
}

// Reasons a rewind is refused without an error.
const (
	rewindBusy   = "busy"              // a turn runs or is queued: cancel it first
	rewindNoSuch = "session_not_found" // not a live session here
)

// RewindSession serves `_session/rewind`: the conversation goes back to
// before the user message named; files are not touched (that is
// `_session/rewind_files`). While a turn runs or prompts wait the answer is
// {rewound: false, reason: "busy"} and nothing changes: the client cancels
// and waits for the prompt's answer first (the AIR extension's contract).
func (a *Agent) RewindSession(ctx context.Context, req *acp.RewindSessionRequest) (*acp.RewindSessionResponse, error) {
	if err := req.BeforeMessage.Check("beforeMessage"); err != nil {
		return nil, err
	}
	if req.ResumeAtMessage != nil {
		if err := req.ResumeAtMessage.Check("resumeAtMessage"); err != nil {
			return nil, err
		}
	}
	s, err := a.session(req.SessionID)
	if err != nil {
		return &acp.RewindSessionResponse{Reason: rewindNoSuch}, nil
	}
	if !s.holdTurn() {
		return &acp.RewindSessionResponse{Reason: rewindBusy}, nil
	}
	defer s.releaseTurn()
	m, err := s.rw.findPrompt(req.BeforeMessage, "beforeMessage")
	if err != nil {
		return nil, err
	}
	s.rw.rewindTo(ctx, session.Rewind{Before: m.seq, Via: acp.MethodSessionRewind})
	return &acp.RewindSessionResponse{Rewound: true}, nil
}

// holdTurn takes the session's turn for work between turns (a rewind), as a
// prompt would, so no prompt starts meanwhile (one that arrives waits);
// false when a turn runs or prompts wait. releaseTurn gives it back.
func (s *conversation) holdTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || len(s.queued) > 0 {
		return false
	}
	s.running, s.done = true, make(chan struct{})
	return true
}

func (s *conversation) releaseTurn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.done)
	s.done = nil
	s.handOver()
}

// rewindTo logs a rewind (of the user message at rw.Before and what
// follows up to rw.Until, 0 for everything; or of what follows rw.After)
// and returns once it is on disk (it is synced as it is written). It is
// applied either way: when the log cannot take it, the session goes on in
// memory, rewound, the editor was told it is no longer saved
// (timeline.record), and the error says why.
func (r *rewinder) rewindTo(ctx context.Context, rw session.Rewind) error {
	r.emit(ctx, session.New(rw))
	err := r.saved()
	r.logger.Info("session rewound", "session", r.id, "before", rw.Before, "after", rw.After, "via", rw.Via, "saved", err == nil)
	return err
}

// segment is the suffix a client (AIR) puts on the id of a part of a message.
var segment = regexp.MustCompile(`:segment:\d+$`)

// findPrompt resolves a point a client names to a user message of the
// conversation (pointAt). -32602, naming the id, when there is none.
func (r *rewinder) findPrompt(p *acp.HistoryPoint, field string) (promptMark, error) {
	marks := r.marks()
	if i := pointAt(marks, p, promptMark.messageID, promptMark.userMessage); i >= 0 {
		return marks[i], nil
	}
	return promptMark{}, &acp.Error{Code: acp.CodeInvalidParams,
		Message: fmt.Sprintf("invalid params: %s %q was not found among the user messages of session %s", field, p.MessageID, r.id),
		Data:    map[string]string{"messageId": p.MessageID}}
}

func (m promptMark) messageID() string                 { return mapping.UserMessageID(m.seq, m.msg) }
func (m promptMark) userMessage() *session.UserMessage { return &m.msg }

// pointAt is the index of the message a client's point names among msgs
// (user messages for a rewind before a prompt, every message sent for v2's
// rewind and a fork at a message), -1 for none: by id first (idAt), else
// the Nth user message whose text has the fingerprint. id and user read a
// message's id and its user message (nil: not a user's).
func pointAt[M any](msgs []M, p *acp.HistoryPoint, id func(M) string, user func(M) *session.UserMessage) int {
	if i := idAt(msgs, p.MessageID, id); i >= 0 || p.Fingerprint == "" {
		return i
	}
	n := max(p.Occurrence, 1)
	return slices.IndexFunc(msgs, func(m M) bool {
		if u := user(m); u != nil && fingerprinted(*u, p.Fingerprint) {
			n--
		}
		return n == 0
	})
}

// idAt is the index of the message of that id, -1 for none: the id as
// given, else with the ":segment:<n>" suffix a client puts on a part of a
// message taken off.
func idAt[M any](msgs []M, want string, id func(M) string) int {
	for _, try := range []string{want, segment.ReplaceAllString(want, "")} {
		if try == "" {
			continue
		}
		if i := slices.IndexFunc(msgs, func(m M) bool { return id(m) == try }); i >= 0 {
			return i
		}
	}
	return -1
}

// fingerprinted reports whether a user message's text has the fingerprint
// a client computed: over its text blocks joined as sent (live), or as a
// replay sent them (consecutive text blocks in one chunk, mapping).
func fingerprinted(m session.UserMessage, fp string) bool {
	blocks, ok := m.PromptBlocks()
	if !ok {
		return fingerprint(m.Text) == fp
	}
	var sent, replayed strings.Builder
	prevText := false
	for _, b := range blocks {
		if b.Type != "text" {
			prevText = false
			continue
		}
		sent.WriteString(b.Text)
		if prevText {
			replayed.WriteString(acp.TextSeparator(replayed.String(), b.Text))
		}
		replayed.WriteString(b.Text)
		prevText = true
	}
	return fingerprint(sent.String()) == fp || fingerprint(replayed.String()) == fp
}

// fingerprint is a text's messageFingerprint: diffs.Hash's hex SHA-256.
func fingerprint(text string) string {
	return "sha256:" + diffs.Hash(text)
}
