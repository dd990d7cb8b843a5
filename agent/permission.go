package agent

import (
	"context"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// Permission option ids. Any other id a client answers with is a rejection:
// an option the agent did not offer can never grant anything.
const (
	optAllowOnce    = "allow-once"
	optAllowAlways  = "allow-always"
	optRejectOnce   = "reject-once"
	optRejectAlways = "reject-always"
)

// permissions remembers "always" answers for the session. The key is the
// tool's registry.Permission.Key, which scopes an answer to what its button
// said ("bash:go test" for `go test` commands, "edit:<workspace>" for edits
// inside the workspace); ACP leaves remembering to the agent.
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

// Approve asks the editor about a call with session/request_permission,
// unless an "always" answer for the same key already decided it. The
// request is for the card already on screen: it carries the card's title
// (the exact command, or the path), kind and rawInput, and for an edit the
// diff it would apply. While waiting the card stays pending.
//
// The call runs only on an allow option. The cancelled outcome, a
// session/cancel while waiting (even if an answer arrives after it), a
// client that fails the request, and an unknown optionId all keep it from
// running.
func (s *Session) Approve(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (pipeline.Outcome, error) {
	key, subject := d.Name, "`"+d.Name+"`"
	if p := d.Permission(c); p != nil {
		if p.Key != "" {
			key = p.Key
		}
		if p.Subject != "" {
			subject = p.Subject
		}
	}
	if allowed, known := s.perms.get(key); known {
		s.a.log.Debug("permission remembered", "session", s.id, "tool", d.Name, "key", key, "allowed", allowed)
		if allowed {
			return pipeline.Approved, nil
		}
		return pipeline.Rejected, nil
	}
	s.emit(ctx, session.New(session.TypeToolStatus, session.ToolStatus{CallID: c.ID, Status: "awaiting_permission"}))
	s.emitMu.Lock()
	tc, known := s.tr.PermissionToolCall(c.ID)
	s.emitMu.Unlock()
	if !known {
		// No card (a call the agent did not log): Zed then builds the entry
		// from this update, and needs a title for it.
		title := d.Name
		tc.Title = &title
	}
	req := &acp.RequestPermissionRequest{
		SessionID: s.id,
		ToolCall:  tc,
		Options: []acp.PermissionOption{
			{OptionID: optAllowOnce, Name: "Allow once", Kind: acp.AllowOnce},
			{OptionID: optAllowAlways, Name: "Always allow " + subject, Kind: acp.AllowAlways},
			{OptionID: optRejectOnce, Name: "Reject", Kind: acp.RejectOnce},
			{OptionID: optRejectAlways, Name: "Always reject " + subject, Kind: acp.RejectAlways},
		},
	}
	resp, err := s.a.client.RequestPermission(ctx, req)
	switch {
	case ctx.Err() != nil:
		return pipeline.Cancelled, nil
	case err != nil:
		return pipeline.Unavailable, err
	case resp.Outcome.Outcome != "selected":
		return pipeline.Cancelled, nil
	}
	switch resp.Outcome.OptionID {
	case optAllowOnce:
		return pipeline.Approved, nil
	case optAllowAlways:
		s.grant(ctx, key, true)
		return pipeline.Approved, nil
	case optRejectAlways:
		s.grant(ctx, key, false)
	case optRejectOnce:
	default:
		s.a.log.Warn("unknown permission option; rejecting", "session", s.id, "tool", d.Name, "optionId", resp.Outcome.OptionID)
	}
	return pipeline.Rejected, nil
}

// grant remembers an "always" answer for the session and logs it, so a
// loaded or resumed session still knows it (restoreGrants).
func (s *Session) grant(ctx context.Context, key string, allowed bool) {
	s.perms.set(key, allowed)
	s.emit(ctx, session.New(session.TypeGrant, session.Grant{Key: key, Allowed: allowed}))
}

// restoreGrants re-applies the "always" answers a stored log holds.
func (s *Session) restoreGrants(events []session.Event) {
	for _, ev := range events {
		if ev.Type != session.TypeGrant {
			continue
		}
		if g, err := session.Decode[session.Grant](ev); err == nil && g.Key != "" {
			s.perms.set(g.Key, g.Allowed)
		}
	}
}
