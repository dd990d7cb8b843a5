package agent

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// SetSessionTitle (unstable session/set_title) renames a session: a title
// event in its log, so the name survives a restart (session/list reads the
// last one) and a live session's editor gets a session_info_update. The
// first exchange no longer names a session that has a title.
func (a *Agent) SetSessionTitle(ctx context.Context, req *acp.SetSessionTitleRequest) (*acp.SetSessionTitleResponse, error) {
	title := strings.Join(strings.Fields(req.Title), " ") // one line, as a list shows it
	if title == "" {
		return nil, acp.InvalidParams("invalid params: title is empty")
	}
	ev := session.Title{Title: title, UpdatedAt: a.o.Now().UTC().Format(time.RFC3339)}
	if err := a.appendTo(ctx, req.SessionID, ev); err != nil {
		return nil, err
	}
	a.log.Info("session renamed", "session", req.SessionID)
	return &acp.SetSessionTitleResponse{Title: title}, nil
}

// ArchiveSession (unstable session/archive) takes a session out of the
// default session/list; it stays whole and loadable.
func (a *Agent) ArchiveSession(ctx context.Context, req *acp.ArchiveSessionRequest) (*acp.EmptyResponse, error) {
	return a.archive(ctx, req.SessionID, true)
}

// UnarchiveSession (unstable session/unarchive) puts it back.
func (a *Agent) UnarchiveSession(ctx context.Context, req *acp.ArchiveSessionRequest) (*acp.EmptyResponse, error) {
	return a.archive(ctx, req.SessionID, false)
}

func (a *Agent) archive(ctx context.Context, id string, archived bool) (*acp.EmptyResponse, error) {
	if a.o.Store == nil {
		return nil, acp.Errorf(acp.CodeMethodNotFound, "sessions are not saved (acp-bridge runs without a state directory), so there is no list to archive from")
	}
	if err := a.appendTo(ctx, id, session.Archive{Archived: archived}); err != nil {
		return nil, err
	}
	a.log.Info("session archive state set", "session", id, "archived", archived)
	return &acp.EmptyResponse{}, nil
}

// appendTo logs one event in a session: through the live session when it
// is live here (in order with its turn, and sent to the editor), else
// straight into its stored log, which is opened (locked against another
// process using it) and closed again.
func (a *Agent) appendTo(ctx context.Context, id string, p session.Payload) error {
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s != nil {
		s.emit(ctx, session.New(p))
		if err := s.log.Err(); err != nil {
			return acp.Errorf(acp.CodeInternalError, "session %s: the change could not be saved: %v", id, err)
		}
		return nil
	}
	if a.o.Store == nil {
		return notFound(id)
	}
	lg, _, err := a.o.Store.Open(id)
	if errors.Is(err, session.ErrNotFound) {
		return notFound(id)
	}
	if err != nil {
		return loadError(id, err)
	}
	lg.Append(session.New(p))
	werr := lg.Err()
	if err := lg.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return acp.Errorf(acp.CodeInternalError, "session %s: the change could not be saved: %v", id, werr)
	}
	return nil
}

func notFound(id string) error {
	return &acp.Error{Code: acp.CodeResourceNotFound, Message: "session not found: " + id, Data: map[string]string{"sessionId": id}}
}

var (
	_ acp.SessionTitler   = (*Agent)(nil)
	_ acp.SessionArchiver = (*Agent)(nil)
)
