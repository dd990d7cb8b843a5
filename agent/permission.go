package agent

import (
	"context"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// permissions remembers "always" answers for the session, keyed by tool.
type permissions struct {
	mu     sync.Mutex
	always map[string]bool // key -> allowed (true) or rejected (false)
}

func (p *permissions) get(key string) (allowed, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	allowed, known = p.always[key]
	return
}

func (p *permissions) set(key string, allowed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.always == nil {
		p.always = map[string]bool{}
	}
	p.always[key] = allowed
}

// Approve asks the editor about a call with session/request_permission. The
// card is already on screen; an unknown optionId is a rejection.
func (s *Session) Approve(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (pipeline.Outcome, error) {
	key, subject := d.Name, d.Name
	if p := d.Permission(c); p != nil {
		if p.Key != "" {
			key = p.Key
		}
		if p.Subject != "" {
			subject = p.Subject
		}
	}
	if allowed, known := s.perms.get(key); known {
		if allowed {
			return pipeline.Approved, nil
		}
		return pipeline.Rejected, nil
	}
	s.emit(ctx, session.New(session.TypeToolStatus, session.ToolStatus{CallID: c.ID, Status: "awaiting_permission"}))
	title := d.Name
	req := &acp.RequestPermissionRequest{
		SessionID: s.id,
		ToolCall:  acp.ToolCallUpdate{ToolCallID: c.ID, Title: &title, RawInput: c.Args},
		Options: []acp.PermissionOption{
			{OptionID: "allow-once", Name: "Allow once", Kind: acp.AllowOnce},
			{OptionID: "allow-always", Name: "Always allow " + subject, Kind: acp.AllowAlways},
			{OptionID: "reject-once", Name: "Reject", Kind: acp.RejectOnce},
			{OptionID: "reject-always", Name: "Always reject " + subject, Kind: acp.RejectAlways},
		},
	}
	resp, err := s.a.client.RequestPermission(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return pipeline.Cancelled, nil
		}
		return pipeline.Unavailable, err
	}
	if resp.Outcome.Outcome == "cancelled" {
		return pipeline.Cancelled, nil
	}
	switch resp.Outcome.OptionID {
	case "allow-once":
		return pipeline.Approved, nil
	case "allow-always":
		s.perms.set(key, true)
		return pipeline.Approved, nil
	case "reject-always":
		s.perms.set(key, false)
	}
	return pipeline.Rejected, nil
}
