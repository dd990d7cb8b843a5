package agent

import (
	"context"
	"errors"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// Handing a session over between processes (session/handover.go). A client
// that runs one acp-bridge per chat (codecompanion) resumes a session in a
// new chat's process while the old chat's process holds it. What the user
// wants is their thread, where they asked for it:
//
//   - the holder is idle: it lets go (closes the session, tells its editor
//     the session continues elsewhere and how to take it back), and the new
//     process opens it;
//   - the holder is running a turn: nothing is taken from under it; the
//     request fails with what to do (wait, or stop it there, then resume).
//
// Never a silent loss: a refusal is a JSON-RPC error the client shows.

// handOverWait bounds how long a resume waits for the holder to let go.
const handOverWait = 5 * time.Second

// openHeld opens a session's stored log; when another process holds it,
// it asks that process to hand it over and waits for it to, within
// handOverWait.
func (a *Agent) openHeld(ctx context.Context, id string) (*session.Log, session.Header, error) {
	lg, h, err := a.o.Store.Open(id)
	if !errors.Is(err, session.ErrBusy) {
		return lg, h, err
	}
	holder, known := a.o.Store.Holder(id)
	switch {
	case known && holder.Busy:
		return nil, h, acp.InvalidParams("invalid params: session %s is running a turn in another acp-bridge process (pid %d, likely another chat window). "+
			"Wait for its answer there, or stop it there, then resume the session again", id, holder.PID)
	case !known:
		return nil, h, acp.InvalidParams("invalid params: session %s is open in another acp-bridge process; close that chat, then resume it again", id)
	}
	if err := a.o.Store.RequestHandOver(id); err != nil {
		return nil, h, acp.InvalidParams("invalid params: session %s is open in another acp-bridge process (pid %d), which cannot be asked to let it go (%v); close that chat, then resume it again", id, holder.PID, err)
	}
	deadline := time.Now().Add(handOverWait)
	for {
		lg, h, err = a.o.Store.Open(id)
		if !errors.Is(err, session.ErrBusy) {
			if err == nil {
				a.log.Info("session handed over by another process", "session", id, "from", holder.PID)
			}
			return lg, h, err
		}
		if time.Now().After(deadline) {
			return nil, h, acp.InvalidParams("invalid params: session %s is open in another acp-bridge process (pid %d), which did not let it go: "+
				"it may have started a turn. Wait for its answer there, or close that chat, then resume the session again", id, holder.PID)
		}
		select {
		case <-ctx.Done():
			return nil, h, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// HandOverRequested lets go of every idle live session another process
// asked for (session.Store.RequestHandOver): the editor is told the session
// continues in another window and how to take it back, and the session is
// closed here, which frees its log. A session running a turn is kept.
func (a *Agent) HandOverRequested() {
	if a == nil {
		return
	}
	a.mu.Lock()
	var asked []*conversation
	for _, s := range a.sessions {
		if s.log.HandOverRequested() {
			asked = append(asked, s)
		}
	}
	a.mu.Unlock()
	for _, s := range asked {
		s.mu.Lock()
		busy := s.running
		s.mu.Unlock()
		a.mu.Lock()
		if busy || a.sessions[s.id] != s {
			a.mu.Unlock()
			a.log.Info("session asked for by another process kept: a turn is running", "session", s.id)
			continue
		}
		delete(a.sessions, s.id)
		if a.moved == nil {
			a.moved = map[string]bool{}
		}
		a.moved[s.id] = true
		a.mu.Unlock()
		a.log.Info("session handed over to another process", "session", s.id)
		desc := "It was resumed in another window (another acp-bridge process) and continues there. " +
			"Messages sent here are not added to it; resume it here to take it back."
		// Told, not logged: the log is the other process's now.
		s.emitMu.Lock()
		updates := s.fold(session.New(session.Notice{Text: "\n\n[This session continues in another window. " + desc + "]\n\n",
			Severity: acp.NoticeWarning, Title: "This session continues in another window", Description: desc}))
		s.emitMu.Unlock()
		s.send(context.Background(), updates)
		s.close(context.Canceled)
	}
}
