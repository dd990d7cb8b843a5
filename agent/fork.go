package agent

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

var _ acp.SessionForker = (*Agent)(nil)

// ForkSession (session/fork, unstable) starts a new session whose log begins
// with the source session's events: the same conversation, controls and
// "always" answers, so its next model request carries the same history. The
// source, live here or only stored, is left as it was. The fork answers like
// session/new and is listed, loaded and deleted like any session.
func (a *Agent) ForkSession(ctx context.Context, req *acp.ForkSessionRequest) (*acp.ForkSessionResponse, error) {
	if err := checkRoots(req.Cwd, req.AdditionalDirectories, req.McpServers); err != nil {
		return nil, err
	}
	sp, err := parseSystemPrompt(req.SystemPrompt)
	if err != nil {
		return nil, err
	}
	at, err := acp.ForkPoint(req.Meta) // a fork at a message (rewindv2.go)
	if err != nil {
		return nil, err
	}
	evs, dirs, err := a.forkSource(req.SessionID)
	if err != nil {
		return nil, err
	}
	evs = finishedTurns(evs)
	roots := []string{filepath.Clean(req.Cwd)}
	if len(req.AdditionalDirectories) > 0 {
		dirs = req.AdditionalDirectories
	}
	for _, d := range dirs {
		roots = append(roots, filepath.Clean(d))
	}

	a.mu.Lock()
	caps := a.caps
	a.mu.Unlock()
	id := a.o.NewID()
	// The log is made once the fork point is found: a point that is not
	// there leaves no session behind.
	s := newSession(a, id, roots, caps, session.NewLog(a.o.Now), false)
	var cut int64 // the source's last event the fork keeps (0: all)
	if at != nil {
		// The fork keeps the history up to and including the message named
		// (AIR's fork point): it is the whole source, rewound to after that
		// message (a rewind, so what the source rewound stays rewound).
		if cut, _, err = s.rw.cutAfter(evs, at); err != nil {
			s.close(registry.ErrShutdown)
			return nil, err
		}
	}
	s.log = a.newLog(id, roots)
	// The fork's log starts with the source's events, folded as a load
	// folds them: the same state. The editor is sent none of them: a fork
	// answers like session/new, and the client has the conversation.
	// record is the live path without the send: a log that cannot be
	// written says so, as it would live. The events get the fork's
	// sequence numbers; the ones that name others (a rewind's) are
	// renumbered with them.
	seqs := map[int64]int64{}
	for _, ev := range evs {
		seqs[ev.Seq] = int64(s.log.Len()) + 1 // the next append's, in a log of its own
		s.record(ctx, renumbered(ev, seqs), false)
	}
	if cut > 0 {
		s.record(ctx, session.New(session.Rewind{After: seqs[cut], Via: acp.MethodSessionFork}), false)
	}
	if err := a.admit(s); err != nil {
		s.close(registry.ErrShutdown)
		return nil, err
	}
	s.prompts.setClient(sp)
	s.mcp.start(ctx, req.McpServers)
	a.log.Info("session forked", "session", s.id, "from", req.SessionID, "events", len(evs))
	s.announced.afterReply(ctx)
	modes, opts := s.ctl.Controls()
	return &acp.ForkSessionResponse{SessionID: s.id, Modes: modes, ConfigOptions: opts}, nil
}

// forkSource returns the events and additional directories of the session
// to fork: a live one as it stands, else the stored one, read without
// opening it (another process may hold it; a fork takes nothing from it).
func (a *Agent) forkSource(id string) ([]session.Event, []string, error) {
	a.mu.Lock()
	live := a.sessions[id]
	a.mu.Unlock()
	if live != nil {
		return live.log.Events(), live.roots[1:], nil
	}
	if a.o.Store == nil {
		return nil, nil, loadError(id, session.ErrNotFound)
	}
	h, evs, err := a.o.Store.Read(id)
	if err != nil {
		return nil, nil, loadError(id, err)
	}
	return evs, h.AdditionalDirectories, nil
}

// finishedTurns drops a turn still running in the source (its prompt, and
// all that followed its start): the fork starts from the last answer, and a
// half-made tool call would be refused by the model's API.
func finishedTurns(evs []session.Event) []session.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Payload.(type) {
		case session.TurnEnd:
			return evs
		case session.TurnStart:
			if i > 0 {
				if _, ok := evs[i-1].Payload.(session.UserMessage); ok {
					i--
				}
			}
			return evs[:i]
		}
	}
	return evs
}

// renumbered is ev with the sequence numbers it names (a rewind's, a
// restore's) as seqs maps them; one it does not map becomes 0, which
// names nothing.
func renumbered(ev session.Event, seqs map[int64]int64) session.Event {
	switch p := ev.Payload.(type) {
	case session.Rewind:
		p.Before, p.After, p.Until = seqs[p.Before], seqs[p.After], seqs[p.Until]
		ev.Payload = p
	case session.FilesRestored:
		p.Before = seqs[p.Before]
		p.Restored = slices.Clone(p.Restored)
		for i, r := range p.Restored {
			r.Undid = slices.Clone(r.Undid)
			for j, u := range r.Undid {
				r.Undid[j] = seqs[u]
			}
			p.Restored[i] = r
		}
		ev.Payload = p
	}
	return ev
}
