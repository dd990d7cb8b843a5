package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/session"
)

// timeline is a session's one path for events: each is appended to the
// log, folded into the session's state (apply) and translated, and its
// updates are sent; a load and a replay take the stored log through the
// same fold (sendLog, load.go). It changes when how events travel
// changes, and nothing else does.
//
// emitMu orders events: one append and its updates at a time, so the log
// order is the wire order. Lock order, the only nesting in a session:
//
//	outputCoalescer.sendMu -> emitMu -> conversation.mu -> the registry's lock
//	meter.costMu -> emitMu
//
// A coalescer sends (emits) holding its sendMu, so output never follows
// its call's result. Under emitMu, apply takes the conversation's mu to
// apply the event, then sets the scope's tools mode, and the translator
// reads the registry (both take the registry's lock). Nothing takes emitMu
// while holding mu, and nothing emits while holding any other lock but the
// meter's costMu (a running cost is read and logged as one step): the
// parts' own locks (announcer, meter, Files, userPolicy, mcpclient.Servers,
// callRecorder, a coalescer's mu) are each taken alone and released before
// an emit, and the parts' readers of the folded state, and the turn's
// steering (turnSlot), take mu alone. What only the running turn touches
// (room's window) needs no lock.
type timeline struct {
	sessionID string
	client    acp.Client
	logger    *slog.Logger
	tools     mapping.Tools // the session's scope: what a replay leaves out depends on it
	// apply folds an event into the session's state (it takes the
	// conversation's mu; newSession).
	apply func(ev session.Event)

	emitMu     sync.Mutex
	log        *session.Log
	tr         translator
	saveFailed bool // the log could not be written; the user was told (record)
}

// emit appends an event, applies it and sends its updates: the one live
// path. Updates are written with a context that outlives a cancelled turn:
// final card updates must still go out.
func (t *timeline) emit(ctx context.Context, ev session.Event) { t.record(ctx, ev, true) }

// record appends, applies and translates an event; send says whether the
// editor sees the updates (not for what it learns otherwise: the controls
// session/new answers with, the seal of a resumed session).
func (t *timeline) record(ctx context.Context, ev session.Event, send bool) {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	updates := t.fold(t.log.Append(ev))
	// Said with an update the editor is sent: a log that could not even be
	// created (session/new on a full disk) fails before any is.
	if send && !t.saveFailed {
		if err := t.log.Err(); err != nil {
			// The disk filled up (or went away): say so once, where the
			// user looks; the session goes on in memory.
			t.saveFailed = true
			updates = append(updates, t.fold(t.log.Append(session.New(session.Notice{Text: fmt.Sprintf(
				"\n\n[This session is no longer being saved (%v); it goes on in memory, but session/load will not have what follows.]\n\n", err),
				Severity: acp.NoticeWarning, Title: "This session is no longer being saved",
				Description: fmt.Sprintf("%v. It goes on in memory, but session/load will not have what follows.", err)})))...)
		}
	}
	if send {
		t.send(ctx, updates)
	}
}

func (t *timeline) send(ctx context.Context, updates []acp.Update) {
	for _, u := range updates {
		if err := t.client.SessionUpdate(context.WithoutCancel(ctx), t.sessionID, u); err != nil {
			t.logger.Debug("session/update not delivered", "session", t.sessionID, "err", err)
		}
	}
}

// fold applies one logged event to the state and translates it; called
// with emitMu held, for every event live and on load alike.
func (t *timeline) fold(ev session.Event) []acp.Update {
	t.apply(ev)
	return t.tr.Translate(ev)
}

// notice says something to the user as agent text (command output, hints).
func (t *timeline) notice(ctx context.Context, text string) {
	t.emit(ctx, session.New(session.Notice{Text: text}))
}

// status tells the user something out of band: a retry, a dead MCP server,
// a stop. n carries both forms: a `notice` for a client that takes them
// (its Severity, Title, Description), agent text (its Text) for the others.
// This is the plumbing every such message goes through (compaction too).
func (t *timeline) status(ctx context.Context, n session.Notice) {
	if n.Text == "" {
		n.Text = mapping.NoticeText(n.Title, n.Description)
	}
	t.emit(ctx, session.New(n))
}

// tellSkipped tells the editor which lines of the stored log could not be
// used: the session was rebuilt without them. The notice is about this
// load, not part of the conversation, so it is not logged.
func (t *timeline) tellSkipped(ctx context.Context, send bool) {
	skipped := t.log.Skipped()
	if len(skipped) == 0 {
		return
	}
	level := slog.LevelInfo // the editor is told below
	if !send {
		level = slog.LevelWarn // resumed: nothing is shown, so the log says it
	}
	t.logger.Log(ctx, level, "session log has damaged lines; loaded without them", "session", t.sessionID, "lines", len(skipped), "first", skipped[0].Error())
	if !send {
		return
	}
	var b strings.Builder
	for i, c := range skipped {
		if i == 5 {
			fmt.Fprintf(&b, "\n… and %d more", len(skipped)-i)
			break
		}
		b.WriteString("\n- " + c.Error())
	}
	what := fmt.Sprintf("%d damaged lines of its log were", len(skipped))
	if len(skipped) == 1 {
		what = "a damaged line of its log was"
	}
	desc := fmt.Sprintf("The session loaded, but %s left out (the file is unchanged):%s", what, b.String())
	t.emitMu.Lock()
	updates := t.fold(session.New(session.Notice{Text: "\n\n[" + desc + "]\n\n", Severity: acp.NoticeWarning,
		Title: "Part of this session could not be read", Description: desc}))
	t.emitMu.Unlock()
	t.send(ctx, updates)
}

// foldLog applies every stored event of a session being opened, through
// the same fold as live events; the editor gets the updates of the events
// from sequence number from on (none for 0).
func (t *timeline) foldLog(ctx context.Context, from int64) error {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	return t.sendLog(ctx, t.fold, from)
}

// sendLog is the stored log's one loop, for a load and a replay alike:
// each event goes through step (the fold, or only a translator), and with
// send its updates go to the editor, except those a replay leaves out
// (hiddenOnReplay). An update the editor does not take fails the load,
// where the live path (record) only logs it. Called with emitMu held.
//
// Only the events from sequence number from on are sent (none for 0): a
// v2 resume replays from a cursor, and the translator still sees every
// event, so what it sends is what a whole replay would send of them.
func (t *timeline) sendLog(ctx context.Context, step func(session.Event) []acp.Update, from int64) error {
	send := from > 0
	evs := t.log.Events()
	void := hiddenOnReplay(evs, t.tools)
	for i, ev := range evs {
		if err := ctx.Err(); err != nil {
			// $/cancel_request (or the editor gone). A load answers -32800
			// and restore drops the half-folded session, unsealed and not
			// live, its log closed, so a later load starts clean; a replay
			// leaves the live session as it was.
			return err
		}
		updates := step(session.WithBlocks(ev)) // a prompt is decoded here, once for the fold and the translator
		if !send || void[i] || ev.Seq < from {
			continue
		}
		for _, u := range updates {
			if err := t.client.SessionUpdate(ctx, t.sessionID, u); err != nil {
				return fmt.Errorf("replaying session %s: %w", t.sessionID, err)
			}
		}
	}
	return nil
}
