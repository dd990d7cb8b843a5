package agent

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/hooks"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/settings"
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
	// policy is the user's rules and hooks: what they allow needs no
	// prompt, what they ask about is asked without "always" options, and
	// an "always allow" becomes a project rule there (policy.go).
	policy *userPolicy
	// seq numbers the trust cards of a session (their ids are unique).
	seq func() string
}

// gate asks the user about calls whose tool wants approval.
// An allow rule or a PreToolUse hook's allow answers the tool's request.
func (p *permissions) gate(ctx context.Context, d *registry.Def, c *registry.Call) pipeline.Decision {
	if perm := d.Permission(c); perm != nil {
		if p.policy != nil && p.policy.allows(ctx, c) {
			return pipeline.Decision{Kind: pipeline.Allow}
		}
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
	if p.policy != nil {
		if why := p.policy.asks(ctx, c); why != "" {
			// The user's own rule (or hook) wants this asked every time:
			// no "always" answers it, and the prompt says which rule.
			p.policy.report(ctx, "A permission rule asks", "Asking because "+why+".")
			opt, out, err := p.request(ctx, d, c, askOptions)
			if out == pipeline.Approved && opt != optAllowOnce {
				out = pipeline.Rejected // only the options offered count
			}
			return out, err
		}
	}
	key, subject, rule := d.Name, "`"+d.Name+"`", ""
	if perm := d.Permission(c); perm != nil {
		if perm.Key != "" {
			key = perm.Key
		}
		if perm.Subject != "" {
			subject = perm.Subject
		}
		rule = perm.Rule
	}
	if allowed, known := p.granted(key); known {
		p.log.Debug("permission remembered", "session", p.id, "tool", d.Name, "key", key, "allowed", allowed)
		if allowed {
			return pipeline.Approved, nil
		}
		return pipeline.Rejected, nil
	}
	opt, out, err := p.request(ctx, d, c, options(subject))
	if out != pipeline.Approved || err != nil {
		return out, err
	}
	switch opt {
	case optAllowOnce:
		return pipeline.Approved, nil
	case optAllowAlways:
		// A rule for the project, which the next session and the next
		// bridge process keep; when there is none to make, or it cannot be
		// kept, the answer lasts for the session.
		if p.policy == nil || !p.policy.remember(ctx, rule) {
			p.grant(ctx, key, true)
		}
		return pipeline.Approved, nil
	case optRejectAlways:
		p.grant(ctx, key, false)
	case optRejectOnce:
	default:
		p.log.Warn("unknown permission option; rejecting", "session", p.id, "tool", d.Name, "optionId", opt)
	}
	return pipeline.Rejected, nil
}

// request asks the editor about a call with session/request_permission,
// for the card already on screen (see Approve). out is Approved when an
// option was selected (opt says which), else why there is no answer.
func (p *permissions) request(ctx context.Context, d *registry.Def, c *registry.Call, opts []acp.PermissionOption) (opt string, out pipeline.Outcome, err error) {
	p.emit(ctx, session.New(session.ToolStatus{CallID: c.ID, Status: "awaiting_permission"}))
	tc, known := p.card(c.ID)
	if !known {
		// No card (a call the agent did not log): Zed then builds the entry
		// from this update, and needs a title for it.
		title := d.Name
		tc.Title = &title
	}
	req := &acp.RequestPermissionRequest{SessionID: p.id, ToolCall: tc, Options: opts}
	resp, err := p.client.RequestPermission(ctx, req)
	switch {
	case ctx.Err() != nil:
		return "", pipeline.Cancelled, nil
	case err != nil:
		return "", pipeline.Unavailable, err
	case resp.Outcome.Outcome != "selected":
		return "", pipeline.Cancelled, nil
	}
	return resp.Outcome.OptionID, pipeline.Approved, nil
}

// askOptions answer a prompt a rule or hook asks for: once, either way.
var askOptions = []acp.PermissionOption{
	{OptionID: optAllowOnce, Name: "Allow once", Kind: acp.AllowOnce},
	{OptionID: optRejectOnce, Name: "Reject", Kind: acp.RejectOnce},
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

// Trust prompt option ids.
const (
	optTrust    = "trust"
	optDistrust = "do-not-trust"
)

// askTrust puts a project's untrusted settings (allow rules and hooks) to
// the user before they take effect: a card listing them, and a permission
// request on it. Only the trust option trusts; anything else (no answer, a
// client without permission prompts) leaves them off, for this session.
func (p *permissions) askTrust(ctx context.Context, proj settings.Project) {
	u := proj.Untrusted
	listing := map[string]any{"file": proj.Path}
	if len(u.Permissions.Allow) > 0 {
		listing["allow"] = u.Permissions.Allow
	}
	var hs []string
	for _, ev := range hooks.Events {
		for _, h := range u.Hooks[string(ev)] {
			line := string(ev)
			if h.Matcher != "" {
				line += " (" + h.Matcher + ")"
			}
			hs = append(hs, line+": "+h.Command)
		}
	}
	if len(hs) > 0 {
		listing["hooks"] = hs
	}
	args, _ := json.Marshal(listing)
	id := "trust-" + proj.Fingerprint[:12]
	if p.seq != nil {
		id += "-" + p.seq()
	}
	p.emit(ctx, session.New(session.ToolCall{CallID: id, Name: "Trust this project's settings?", Args: args}))
	tc, _ := p.card(id)
	req := &acp.RequestPermissionRequest{SessionID: p.id, ToolCall: tc, Options: []acp.PermissionOption{
		{OptionID: optTrust, Name: "Trust these settings", Kind: acp.AllowAlways},
		{OptionID: optDistrust, Name: "Not now", Kind: acp.RejectOnce},
	}}
	resp, err := p.client.RequestPermission(ctx, req)
	trusted := err == nil && ctx.Err() == nil && resp.Outcome.Outcome == "selected" && resp.Outcome.OptionID == optTrust
	result := registry.Result{Content: []registry.Content{registry.Text("Trusted: the project's allow rules and hooks apply from now on, until the file changes.")}}
	if trusted {
		if terr := p.policy.trust(ctx, proj, true); terr != nil {
			trusted = false
			result = registry.ErrorResult("TRUST_NOT_SAVED", "The answer could not be saved, so the project's allow rules and hooks stay off: "+terr.Error())
		}
	}
	if !trusted {
		_ = p.policy.trust(ctx, proj, false)
		if !result.IsError {
			result = registry.ErrorResult(registry.CodeRejected, "Not trusted: the project's allow rules and hooks stay off in this session (its deny and ask rules apply).")
		}
		if err != nil {
			p.log.Warn("asking to trust the project settings failed", "session", p.id, "err", err)
		}
	}
	p.emit(ctx, session.New(session.ToolResult{CallID: id, Result: result}))
}
