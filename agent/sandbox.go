package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/rules"
	"github.com/acp-bridge/acp-bridge/sandbox"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/settings"
)

// Sandbox is how the agent confines the commands it runs (Options.Sandbox).
type Sandbox struct {
	// Mode is a new session's sandbox mode (default workspace-write);
	// each session may change it (the sandbox config option).
	Mode sandbox.Mode
	// Network lets confined commands use the network.
	Network bool
	// Escalate lets a refusal be put to the user in bypass mode too (in
	// every other mode it is asked).
	Escalate bool
	// TempDir is the private temp dir confined commands write to.
	TempDir string
	// Writable are more directories workspace-write commands may write
	// under (build caches, the user's config: sandbox.writable).
	Writable []string
	// Support is what the platform offers (sandbox.Probe): where it offers
	// nothing, a confined mode refuses to run commands and says why.
	Support sandbox.Support
}

// choices are the sandbox modes the picker offers, each saying what it
// means here: on a platform without a sandbox the confined modes say
// that commands do not run in them.
func (o *Sandbox) choices() []session.Choice {
	missing := ""
	if !o.Support.Available {
		missing = " — not available here (" + o.Support.Reason + "): commands will not run"
	}
	net := "no network"
	if o.Network {
		net = "network allowed"
	}
	return []session.Choice{
		{ID: string(sandbox.WorkspaceWrite), Name: "Workspace write", Description: "Commands write only in the workspace and a private temp dir; " + net + missing},
		{ID: string(sandbox.ReadOnly), Name: "Read-only", Description: "Commands write only to a private temp dir; " + net + missing},
		{ID: string(sandbox.Off), Name: "Off", Description: "Commands run unconfined: they can change any file you can and reach the network"},
	}
}

// sandboxing is a session's part of the sandbox: the policy its commands
// run under, what it has told the user, and the run outside the sandbox
// offered when the sandbox refused a command.
type sandboxing struct {
	o      *Sandbox // nil: no sandbox, commands run as they are
	roots  []string
	mode   func() sandbox.Mode         // the session's chosen mode (controls)
	floor  func() (sandbox.Mode, bool) // the project's tightest mode, and whether it turns the network off
	perm   *permissions
	bypass func() bool // the session is in bypass mode
	report func(ctx context.Context, title, description string)

	mu   sync.Mutex
	told map[string]bool // notices given, by kind, once per session
}

// policy is what the session's commands run under now: the chosen mode,
// tightened by the project's settings. nil without a sandbox.
func (sb *sandboxing) policy() *sandbox.Policy {
	if sb.o == nil {
		return nil
	}
	mode := sb.mode()
	floor, noNet := sb.floor()
	if floor.Rank() > mode.Rank() {
		mode = floor
	}
	roots := append(append([]string(nil), sb.roots...), sb.o.Writable...)
	return &sandbox.Policy{Mode: mode, Network: sb.o.Network && !noNet, Roots: roots, TempDir: sb.o.TempDir}
}

// projectSandbox is what the project's settings file asks of the sandbox
// (it only tightens, so it needs no trust): read when a turn starts and
// when an MCP server starts, as the file is then. A file that does not
// read asks nothing here; the policy's reload reports it.
func projectSandbox(root string) (sandbox.Mode, bool) {
	proj, err := settings.LoadProject(root)
	if err != nil || proj.Path == "" {
		return "", false
	}
	p, _ := settings.Section{Sandbox: proj.Section.Sandbox}.Compile(rules.Source{Kind: "project", Path: proj.Path}, root)
	return p.SandboxMode, p.NoNetwork
}

// confine gives ctx the session's policy (the turn's tool calls, hooks and
// jobs run under it) and tells the user, once per session, when their
// commands run unconfined or cannot run at all.
func (sb *sandboxing) confine(ctx context.Context, status func(context.Context, session.Notice)) context.Context {
	p := sb.policy()
	if p == nil {
		return ctx
	}
	switch {
	case !p.Confined():
		sb.once(ctx, status, "off", session.Notice{Severity: acp.NoticeWarning, Title: "Commands are not sandboxed",
			Description: "The sandbox is off: the commands the agent runs (bash, background jobs, hooks) can change any file you can change and reach the network. Permission rules match command text, which can always be spelled another way; only the sandbox holds. Pick a sandbox mode to confine them again."})
	case !sb.o.Support.Available:
		sb.once(ctx, status, "unavailable", session.Notice{Severity: acp.NoticeError, Title: "The sandbox is not available",
			Description: fmt.Sprintf("Sandbox mode %s cannot be enforced here: %s. Commands will not run until you choose sandbox off (the Sandbox option, --sandbox off or sandbox.mode: off in the config file), which runs them unconfined.", p.Mode, sb.o.Support.Reason)})
	}
	return sandbox.WithPolicy(ctx, p)
}

func (sb *sandboxing) once(ctx context.Context, status func(context.Context, session.Notice), kind string, n session.Notice) {
	sb.mu.Lock()
	said := sb.told[kind]
	if sb.told == nil {
		sb.told = map[string]bool{}
	}
	sb.told[kind] = true
	sb.mu.Unlock()
	if !said {
		status(ctx, n)
	}
}

// Escalation option ids (permission.go has the others).
const (
	optOutsideOnce   = "outside-once"
	optOutsideAlways = "outside-always"
	optKeepRefused   = "keep-refused"
)

// escalate is the middleware that offers to run a command the sandbox
// refused once more outside it: the user is asked, naming what was
// refused; "always" remembers the command as an "always allow" does, as a
// rule for the project (the project memory's outside list), else by its
// permission key for the session, and such a command runs outside the
// sandbox from then on. In
// bypass mode nobody is asked and the refusal stands, unless the user's
// config allows escalation there.
func (sb *sandboxing) escalate(d *registry.Def, next pipeline.Next) pipeline.Next {
	return func(ctx context.Context, c *registry.Call) registry.Result {
		pol := sandbox.PolicyFrom(ctx)
		if !pol.Confined() {
			return next(ctx, c)
		}
		key := "sandbox:" + d.Name
		if perm := d.Permission(c); perm != nil && perm.Key != "" {
			key = "sandbox:" + perm.Key
		}
		if allowed, known := sb.perm.granted(key); known && allowed {
			return next(sandbox.WithPolicy(ctx, nil), c)
		}
		if sb.perm.policy != nil {
			if _, ok := sb.perm.policy.runsOutside(c); ok {
				return next(sandbox.WithPolicy(ctx, nil), c)
			}
		}
		r := next(ctx, c)
		if r.Code != sandbox.CodeRefused || ctx.Err() != nil {
			return r
		}
		if sb.bypass() && !sb.o.Escalate {
			return r
		}
		var m struct {
			Refused string `json:"sandbox_refused"`
		}
		_ = json.Unmarshal(r.Meta, &m)
		if m.Refused == "" {
			return r
		}
		subject, rule := "`"+d.Name+"`", ""
		if perm := d.Permission(c); perm != nil {
			if perm.Subject != "" {
				subject = perm.Subject
			}
			rule = perm.Rule
		}
		sb.report(ctx, "The sandbox refused a command",
			fmt.Sprintf("%s (%s). Run it once more outside the sandbox, unconfined?", strings.TrimSpace(m.Refused), pol.Describe()))
		opts := []acp.PermissionOption{
			{OptionID: optOutsideOnce, Name: "Run once outside the sandbox", Kind: acp.AllowOnce},
			{OptionID: optOutsideAlways, Name: mapping.OptionName("Always run " + subject + " outside the sandbox"), Kind: acp.AllowAlways},
			{OptionID: optKeepRefused, Name: "Keep it refused", Kind: acp.RejectOnce},
		}
		opt, out, err := sb.perm.request(ctx, d, c, opts)
		if err != nil || out != pipeline.Approved {
			return r
		}
		switch opt {
		case optOutsideAlways:
			// As an "always allow" (permission.go): a rule for the project,
			// which new sessions and bridge processes keep, else (no rule
			// describes the command, or it cannot be kept) for the session.
			if sb.perm.policy == nil || !sb.perm.policy.rememberOutside(ctx, rule) {
				sb.perm.grant(ctx, key, true)
			}
		case optOutsideOnce:
		default:
			return r
		}
		sb.perm.emit(ctx, session.New(session.ToolStatus{CallID: c.ID, Status: "running"}))
		return next(sandbox.WithPolicy(ctx, nil), c)
	}
}
