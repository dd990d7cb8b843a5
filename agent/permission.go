package agent

import (
	"context"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
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

// "Always" answers are remembered for the session in its state (grants),
// by the tool's registry.Permission.Key, which scopes an answer to what its
// button said ("bash:go test" for `go test` commands, "edit:<workspace>"
// for edits inside the workspace); ACP leaves remembering to the agent.

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
func (s *conversation) Approve(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (pipeline.Outcome, error) {
	key, subject := d.Name, "`"+d.Name+"`"
	if p := d.Permission(c); p != nil {
		if p.Key != "" {
			key = p.Key
		}
		if p.Subject != "" {
			subject = p.Subject
		}
	}
	s.mu.Lock()
	allowed, known := s.st.grants[key]
	s.mu.Unlock()
	if known {
		s.a.log.Debug("permission remembered", "session", s.id, "tool", d.Name, "key", key, "allowed", allowed)
		if allowed {
			return pipeline.Approved, nil
		}
		return pipeline.Rejected, nil
	}
	s.emit(ctx, session.New(session.ToolStatus{CallID: c.ID, Status: "awaiting_permission"}))
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
			{OptionID: optAllowAlways, Name: mapping.OptionName("Always allow " + subject), Kind: acp.AllowAlways},
			{OptionID: optRejectOnce, Name: "Reject", Kind: acp.RejectOnce},
			{OptionID: optRejectAlways, Name: mapping.OptionName("Always reject " + subject), Kind: acp.RejectAlways},
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

// grant logs an "always" answer; applying it is what remembers it, so a
// loaded or resumed session still knows it.
func (s *conversation) grant(ctx context.Context, key string, allowed bool) {
	s.emit(ctx, session.New(session.Grant{Key: key, Allowed: allowed}))
}
