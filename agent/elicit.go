package agent

import (
	"context"
	"errors"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mcpclient"
)

// elicit relays an MCP server's elicitation/create to the editor as ACP's
// elicitation/create, scoped to this session, and its answer back. A
// client that did not advertise the mode gets nothing and the server a
// clean decline; a request cut short (the turn cancelled) is a cancel.
func (s *conversation) elicit(ctx context.Context, e mcpclient.Elicitation) (mcpclient.ElicitAnswer, error) {
	el, ok := s.a.client.(acp.Elicitor)
	if !ok || !s.caps.ElicitationMode(e.Mode) {
		s.a.log.Info("MCP server's elicitation declined: the client takes none", "session", s.id, "mcpServer", e.Server, "mode", e.Mode)
		return mcpclient.Decline, nil
	}
	req := &acp.CreateElicitationRequest{SessionID: s.id, Mode: e.Mode, Message: e.Message}
	switch e.Mode {
	case "form":
		req.RequestedSchema = e.Schema
		if len(req.RequestedSchema) == 0 {
			req.RequestedSchema = []byte(`{"type":"object","properties":{}}`)
		}
	case "url":
		req.URL, req.ElicitationID = e.URL, e.ID
	}
	resp, err := el.CreateElicitation(ctx, req)
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return mcpclient.ElicitAnswer{Action: acp.ElicitCancel}, nil
	case err != nil:
		s.a.log.Warn("elicitation failed in the client; declined", "session", s.id, "mcpServer", e.Server, "err", err)
		return mcpclient.Decline, nil
	}
	switch resp.Action {
	case acp.ElicitAccept, acp.ElicitDecline, acp.ElicitCancel:
		return mcpclient.ElicitAnswer{Action: resp.Action, Content: resp.Content}, nil
	}
	return mcpclient.ElicitAnswer{Action: acp.ElicitCancel}, nil // an action MCP does not know
}

// elicitationDone tells the editor a server finished a URL elicitation.
func (s *conversation) elicitationDone(id string) {
	if el, ok := s.a.client.(acp.Elicitor); ok && s.caps.ElicitationMode("url") {
		if err := el.CompleteElicitation(context.Background(), &acp.CompleteElicitationNotification{ElicitationID: id}); err != nil {
			s.a.log.Debug("elicitation/complete not delivered", "session", s.id, "err", err)
		}
	}
}
