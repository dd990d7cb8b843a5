package agent

import (
	"context"
	"log/slog"

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

// permissions is one session's asking for approval: the gate that turns a
// tool's registry.Permission into an Ask, the session/request_permission
// round trip (the pipeline's Approver), and the "always" answers, which are
// remembered for the session in its state (grants) by the tool's
// registry.Permission.Key. The key scopes an answer to what its button
// said ("bash:go test" for `go test` commands, "edit:<workspace>" for edits
// inside the workspace); ACP leaves remembering to the agent. It owns no
// state: the grants are read from the folded state and written by logging
// a grant event, so a loaded or resumed session still knows them.
type permissions struct {
	id     string
	client acp.Client
	log    *slog.Logger
	// emit logs one event of the session (the awaiting status, a grant).
	emit func(ctx context.Context, ev session.Event)
	// granted reads an "always" answer for key from the folded state.
	granted func(key string) (allowed, known bool)
	// card is the request's toolCall for the call's card on screen (the
	// translator's PermissionToolCall); ok is false for a call without one.
	card func(callID string) (u acp.ToolCallUpdate, ok bool)
}

// gate asks the user about calls whose tool wants approval.
func (p *permissions) gate(_ context.Context, d *registry.Def, c *registry.Call) pipeline.Decision {
	if perm := d.Permission(c); perm != nil {
		return pipeline.Decision{Kind: pipeline.Ask, Reason: perm.Reason}
	}
	return pipeline.Decision{Kind: pipeline.Allow}
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
func (p *permissions) Approve(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (pipeline.Outcome, error) {
	key, subject := d.Name, "`"+d.Name+"`"
	if perm := d.Permission(c); perm != nil {
		if perm.Key != "" {
			key = perm.Key
		}
		if perm.Subject != "" {
			subject = perm.Subject
		}
	}
	if allowed, known := p.granted(key); known {
		p.log.Debug("permission remembered", "session", p.id, "tool", d.Name, "key", key, "allowed", allowed)
		if allowed {
			return pipeline.Approved, nil
		}
		return pipeline.Rejected, nil
	}
	p.emit(ctx, session.New(session.ToolStatus{CallID: c.ID, Status: "awaiting_permission"}))
	tc, known := p.card(c.ID)
	if !known {
		// No card (a call the agent did not log): Zed then builds the entry
		// from this update, and needs a title for it.
		title := d.Name
		tc.Title = &title
	}
	req := &acp.RequestPermissionRequest{SessionID: p.id, ToolCall: tc, Options: options(subject)}
	resp, err := p.client.RequestPermission(ctx, req)
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
		p.grant(ctx, key, true)
		return pipeline.Approved, nil
	case optRejectAlways:
		p.grant(ctx, key, false)
	case optRejectOnce:
	default:
		p.log.Warn("unknown permission option; rejecting", "session", p.id, "tool", d.Name, "optionId", resp.Outcome.OptionID)
	}
	return pipeline.Rejected, nil
}

// options are the four answers offered; subject completes the "always"
// ones ("Always allow `go test`").
func options(subject string) []acp.PermissionOption {
	return []acp.PermissionOption{
		{OptionID: optAllowOnce, Name: "Allow once", Kind: acp.AllowOnce},
		{OptionID: optAllowAlways, Name: mapping.OptionName("Always allow " + subject), Kind: acp.AllowAlways},
		{OptionID: optRejectOnce, Name: "Reject", Kind: acp.RejectOnce},
		{OptionID: optRejectAlways, Name: mapping.OptionName("Always reject " + subject), Kind: acp.RejectAlways},
	}
}

// grant logs an "always" answer; applying it is what remembers it, so a
// loaded or resumed session still knows it.
func (p *permissions) grant(ctx context.Context, key string, allowed bool) {
	p.emit(ctx, session.New(session.Grant{Key: key, Allowed: allowed}))
}
