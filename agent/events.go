package agent

import "github.com/acp-bridge/acp-bridge/session"

// Events returns a copy of a live session's logged events (transient ones,
// like live output, are never logged). Replay tests translate them again
// with a fresh mapping.Translator and compare with what the editor saw.
func (a *Agent) Events(sessionID string) ([]session.Event, bool) {
	a.mu.Lock()
	s := a.sessions[sessionID]
	a.mu.Unlock()
	if s == nil {
		return nil, false
	}
	return s.log.Events(), true
}
