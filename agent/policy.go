package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/hooks"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/rules"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/settings"
)

// userPolicy is the part of one session's pipeline the user configures:
// the permission rules and hooks of their config file, of the project's
// settings file (its allow rules and hooks once trusted) and of the project
// memory ("always" answers). It installs itself on the session's pipeline
// (install), so native calls and Code Mode sub-calls alike pass it. What it
// applies is a view compiled from the files at each turn's start, so
// another bridge process's answers and a changed project file count from
// the next turn.
type userPolicy struct {
	id, cwd string
	user    settings.Policy // the user's config file, compiled
	store   *settings.Store // nil: no project memory (no trust, no lasting answers)
	log     *slog.Logger
	// report tells the user something went wrong (a hook failed, a
	// settings file does not parse), as a warning notice.
	report func(ctx context.Context, title, description string)

	view atomic.Pointer[policyView]
	// calls holds each call's verdict from rules and PreToolUse hooks,
	// made once, by whichever stage asks first, and dropped when the call
	// finishes (forget).
	calls sync.Map // *registry.Call → *callVerdict

	mu       sync.Mutex
	declined string // a project fingerprint the user would not trust, in this session
	said     map[string]bool
}

// policyView is the policy compiled for the turn.
type policyView struct {
	rules   rules.Set
	hooks   hooks.Set
	pol     settings.Policy // the timeouts
	project settings.Project
	memPath string
	// outside are the remembered rules of commands that run outside the
	// sandbox (the "always" answer to a refusal, agent/sandbox.go).
	outside rules.Set
	// trusted: the project's allow rules and hooks apply (or it has none).
	trusted bool
}

// callVerdict is what the user's policy says about one call.
type callVerdict struct {
	once  sync.Once
	deny  string // the refusal the model reads
	ask   string // why the user is asked (a rule or hook)
	allow string // the rule or hook that lets the call run without the tool's own prompt
}

func newUserPolicy(user settings.Policy, store *settings.Store, id, cwd string, log *slog.Logger,
	report func(ctx context.Context, title, description string)) *userPolicy {
	p := &userPolicy{id: id, cwd: cwd, user: user, store: store, log: log, report: report, said: map[string]bool{}}
	p.view.Store(&policyView{rules: p.userRules(), hooks: user.Hooks, pol: user, trusted: true})
	return p
}

// userRules are the user's rules, their relative paths anchored at this
// session's workspace.
func (p *userPolicy) userRules() rules.Set {
	rs := slices.Clone(p.user.Rules)
	for i := range rs {
		if rs[i].Root == "" {
			rs[i].Root = p.cwd
		}
	}
	return rs
}

// install puts the policy's stages on the session's pipeline: the gate
// (deny, ask, and the allows the permission gate reads), the deny rules
// again as a guard, so nothing after the gates can turn them into an
// allow, the PostToolUse hooks, the per-tool timeouts around dispatch
// (innermost, so Retry gives every attempt its own), and the observer that
// forgets a finished call's verdict.
func (p *userPolicy) install(pipe *pipeline.Pipeline) {
	pipe.AddGate(p.gate)
	pipe.AddGuard(p.guard)
	pipe.AddPostExecute(p.post)
	pipe.AddMiddleware(pipeline.TimeoutBy(p.timeout))
	pipe.AddObserver(func(_ *registry.Def, c *registry.Call, _ registry.Result) { p.calls.Delete(c) })
}

// reload compiles the view from the files; problems are reported once each.
func (p *userPolicy) reload(ctx context.Context) {
	v := &policyView{trusted: true}
	merged := p.user
	merged.Rules = p.userRules()
	var problems []string
	proj, err := settings.LoadProject(p.cwd)
	if err != nil {
		problems = append(problems, fmt.Sprintf("The project settings were not applied (none of their rules, not even deny): %v", err))
	}
	var mem settings.Memory
	if p.store != nil {
		v.memPath = p.store.Path(p.cwd)
		if mem, err = p.store.Load(p.cwd); err != nil {
			problems = append(problems, fmt.Sprintf("The remembered permissions were not read: %v", err))
		}
	}
	if proj.Path != "" {
		v.project = proj
		v.trusted = proj.Fingerprint == "" || (p.store != nil && mem.Trusted == proj.Fingerprint)
		sec := proj.Section
		if !v.trusted {
			// A file someone else wrote approves nothing and runs nothing
			// until the user accepts it; its deny and ask rules only
			// restrict, so they apply at once.
			sec.Permissions.Allow, sec.Hooks = nil, nil
		}
		cp, errs := sec.Compile(rules.Source{Kind: "project", Path: proj.Path}, p.cwd)
		for _, e := range errs {
			problems = append(problems, fmt.Sprintf("%s: %v (that entry is ignored)", proj.Path, e))
		}
		merged = merged.Merge(cp)
	}
	rem, errs := mem.Rules(v.memPath)
	for _, e := range errs {
		problems = append(problems, fmt.Sprintf("%s: %v (that rule is ignored)", v.memPath, e))
	}
	merged.Rules = append(merged.Rules, rem...)
	v.outside, errs = mem.OutsideRules(v.memPath)
	for _, e := range errs {
		problems = append(problems, fmt.Sprintf("%s: %v (that rule is ignored)", v.memPath, e))
	}
	v.rules, v.hooks, v.pol = merged.Rules, merged.Hooks, merged
	p.view.Store(v)
	for _, msg := range problems {
		p.mu.Lock()
		said := p.said[msg]
		p.said[msg] = true
		p.mu.Unlock()
		if !said {
			p.report(ctx, "Permission settings problem", msg)
		}
	}
}

func (p *userPolicy) current() *policyView { return p.view.Load() }

// verdict is the call's verdict, made on first use: the rules decide, then
// the PreToolUse hooks run (unless a deny rule refused), in order; a hook's
// deny ends it. A failed hook is reported and decides nothing.
func (p *userPolicy) verdict(ctx context.Context, c *registry.Call) *callVerdict {
	got, _ := p.calls.LoadOrStore(c, &callVerdict{})
	v := got.(*callVerdict)
	v.once.Do(func() {
		view := p.current()
		if r, ok := view.rules.DecideCall(c.Name, c.Args, c.Cwd); ok {
			switch r.Effect {
			case rules.Deny:
				v.deny = fmt.Sprintf("tool %q was not run: the %s refuses it", c.Name, r)
				return
			case rules.Ask:
				v.ask = fmt.Sprintf("the %s asks about it", r)
			case rules.Allow:
				v.allow = r.String()
			}
		}
		for _, h := range view.hooks.For(hooks.PreToolUse, c.Name) {
			o := hooks.Run(ctx, &h, hooks.Input{SessionID: p.id, Cwd: p.cwd, ToolName: c.Name, ToolInput: c.Args, CallID: c.ID}, nil)
			if p.failed(ctx, o) {
				continue
			}
			switch o.Decision {
			case hooks.Deny:
				v.deny = fmt.Sprintf("tool %q was not run: the %s (%s) refused it: %s", c.Name, h.Name(), h.From, o.Reason)
				return
			case hooks.Ask:
				if v.ask == "" {
					v.ask = fmt.Sprintf("the %s (%s) asks about it: %s", h.Name(), h.From, o.Reason)
				}
			case hooks.Allow:
				if v.allow == "" {
					v.allow = h.Name()
				}
			}
		}
	})
	return v
}

// failed reports a hook's failure in the editor (not a cancellation: the
// user did that) and says whether it failed.
func (p *userPolicy) failed(ctx context.Context, o hooks.Outcome) bool {
	if o.Failure == "" {
		return false
	}
	p.log.Warn("hook failed", "session", p.id, "failure", o.Failure)
	if ctx.Err() == nil {
		p.report(ctx, "A hook failed", o.Failure+". The call goes on as if the hook were not there.")
	}
	return true
}

// gate refuses what a deny rule or hook refuses, and asks what an ask rule
// or hook asks about; in every permission mode.
func (p *userPolicy) gate(ctx context.Context, _ *registry.Def, c *registry.Call) pipeline.Decision {
	v := p.verdict(ctx, c)
	switch {
	case v.deny != "":
		return pipeline.Decision{Kind: pipeline.Deny, Reason: v.deny}
	case v.ask != "":
		return pipeline.Decision{Kind: pipeline.Ask, Reason: v.ask}
	}
	return pipeline.Decision{Kind: pipeline.Allow}
}

// allows reports whether a rule or hook lets the call run without the
// tool's own approval request (permissions.gate).
func (p *userPolicy) allows(ctx context.Context, c *registry.Call) bool {
	v := p.verdict(ctx, c)
	return v.allow != "" && v.deny == "" && v.ask == ""
}

// asks is why a rule or hook wants the user asked about c ("" when the
// ask is the tool's own).
func (p *userPolicy) asks(ctx context.Context, c *registry.Call) string {
	return p.verdict(ctx, c).ask
}

// guard is the deny rules once more, after the gates and the user's
// answer: a deny is final whatever answered before it (the view may have
// been reloaded since the gate).
func (p *userPolicy) guard(_ context.Context, _ *registry.Def, c *registry.Call) string {
	if r, ok := p.current().rules.DecideCall(c.Name, c.Args, c.Cwd); ok && r.Effect == rules.Deny {
		return fmt.Sprintf("tool %q was not run: the %s refuses it", c.Name, r)
	}
	return ""
}

// CheckRule is what the rules in effect say of a call of tool with args
// (registry.RuleChecker): web_fetch asks it about each redirect hop, and
// whether the user's own rule names a host it may reach at a private
// address. Only the rules: hooks judge the call the model made, once.
func (p *userPolicy) CheckRule(tool string, args json.RawMessage) registry.RuleVerdict {
	r, written, ok := p.current().rules.Check(tool, args, p.cwd)
	if !ok {
		return registry.RuleVerdict{}
	}
	return registry.RuleVerdict{Effect: string(r.Effect), Rule: r.String(), Written: written}
}

// refusedCodes are results of calls that never ran: PostToolUse hooks are
// about what a tool did.
var refusedCodes = []string{registry.CodeDenied, registry.CodeRejected, registry.CodeApprovalCancelled,
	registry.CodeApprovalUnavailable, registry.CodeGateFailed, registry.CodeGuardFailed,
	registry.CodeAbortedBeforeDispatch, registry.CodeInvalidArgs, registry.CodeUnknownTool}

// post runs the PostToolUse hooks of a call that ran: a block turns the
// result into a failure with the hook's feedback, which the model reads and
// corrects from; additional context reaches the model after all results of
// the step (state.apply).
func (p *userPolicy) post(ctx context.Context, _ *registry.Def, c *registry.Call, r registry.Result) pipeline.PostDecision {
	var dec pipeline.PostDecision
	if r.IsError && slices.Contains(refusedCodes, r.Code) {
		return dec
	}
	resp := &hooks.Response{Text: r.Text(), IsError: r.IsError, Code: r.Code}
	for _, h := range p.current().hooks.For(hooks.PostToolUse, c.Name) {
		o := hooks.Run(ctx, &h, hooks.Input{SessionID: p.id, Cwd: p.cwd, ToolName: c.Name, ToolInput: c.Args, CallID: c.ID, ToolResponse: resp}, nil)
		if p.failed(ctx, o) {
			continue
		}
		if o.Context != "" {
			dec.Context = append(dec.Context, o.Context)
		}
		if o.Decision == hooks.Block {
			dec.Kind = pipeline.Block
			dec.Feedback = []registry.Content{registry.Text(fmt.Sprintf("Error: the %s (%s) blocked this result: %s", h.Name(), h.From, o.Reason))}
			return dec
		}
	}
	return dec
}

// timeout is a tool's limit and where it was set: the configured one (the
// tool's, else its MCP server's, named by its key and file), else the
// tool's own.
func (p *userPolicy) timeout(d *registry.Def) (time.Duration, string) {
	if l := p.current().pol.Timeout(d.Name); l.D > 0 {
		return l.D, l.Where
	}
	return d.Timeout, fmt.Sprintf("the %s tool's own limit", d.Name)
}

// promptSubmitted runs the UserPromptSubmit hooks: blocked is why the
// prompt must not reach the model ("" when it may), extra the context the
// hooks add to it.
func (p *userPolicy) promptSubmitted(ctx context.Context, text string) (blocked string, extra []string) {
	for _, h := range p.current().hooks.For(hooks.UserPromptSubmit, "") {
		o := hooks.Run(ctx, &h, hooks.Input{SessionID: p.id, Cwd: p.cwd, Prompt: text}, nil)
		if p.failed(ctx, o) {
			continue
		}
		if o.Decision == hooks.Block {
			return fmt.Sprintf("The %s (%s) blocked this prompt: %s", h.Name(), h.From, o.Reason), nil
		}
		if o.Context != "" {
			extra = append(extra, o.Context)
		}
	}
	return "", extra
}

// stopped runs the Stop hooks when a turn ends. They are told; what they
// answer does not continue the turn (the user sees a block's reason).
func (p *userPolicy) stopped(ctx context.Context, reason acp.StopReason) {
	for _, h := range p.current().hooks.For(hooks.Stop, "") {
		o := hooks.Run(ctx, &h, hooks.Input{SessionID: p.id, Cwd: p.cwd, StopReason: string(reason)}, nil)
		if p.failed(ctx, o) {
			continue
		}
		if o.Decision == hooks.Block && ctx.Err() == nil {
			p.report(ctx, "A Stop hook objected", fmt.Sprintf("The %s says: %s", h.Name(), o.Reason))
		}
	}
}

// untrusted returns the project settings waiting for the user's trust,
// unless the user declined these very settings in this session.
func (p *userPolicy) untrusted() (settings.Project, bool) {
	v := p.current()
	if v.trusted || p.store == nil || v.project.Fingerprint == "" {
		return settings.Project{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return v.project, p.declined != v.project.Fingerprint
}

// trust records the user's answer about the project settings.
func (p *userPolicy) trust(ctx context.Context, proj settings.Project, ok bool) error {
	if !ok {
		p.mu.Lock()
		p.declined = proj.Fingerprint
		p.mu.Unlock()
		return nil
	}
	if err := p.store.Trust(p.cwd, proj.Fingerprint); err != nil {
		return err
	}
	p.reload(ctx)
	return nil
}

// remember keeps an "always allow" answer as a project rule; false when it
// could not (no memory, or the write failed: the answer then lasts for the
// session, as a grant).
func (p *userPolicy) remember(ctx context.Context, rule string) bool {
	if p.store == nil || rule == "" {
		return false
	}
	if err := p.store.Remember(p.cwd, rules.Allow, rule); err != nil {
		p.log.Warn("remembering a permission failed", "session", p.id, "rule", rule, "err", err)
		return false
	}
	p.reload(ctx)
	return true
}

// runsOutside is the remembered rule under which c runs outside the
// sandbox, if one covers it (as an allow rule would: every command of
// its line).
func (p *userPolicy) runsOutside(c *registry.Call) (rules.Rule, bool) {
	r, ok := p.current().outside.DecideCall(c.Name, c.Args, c.Cwd)
	return r, ok && r.Effect == rules.Allow
}

// rememberOutside keeps an "always run outside the sandbox" answer as a
// project rule, as remember keeps an "always allow"; false when it could
// not (the answer then lasts for the session).
func (p *userPolicy) rememberOutside(ctx context.Context, rule string) bool {
	if p.store == nil || rule == "" {
		return false
	}
	if err := p.store.RememberOutside(p.cwd, rule); err != nil {
		p.log.Warn("remembering a run outside the sandbox failed", "session", p.id, "rule", rule, "err", err)
		return false
	}
	p.reload(ctx)
	return true
}

// forget removes a remembered rule.
func (p *userPolicy) forget(ctx context.Context, rule string, outside bool) (bool, error) {
	if p.store == nil {
		return false, nil
	}
	forget := p.store.Forget
	if outside {
		forget = p.store.ForgetOutside
	}
	found, err := forget(p.cwd, rule)
	if err == nil {
		p.reload(ctx)
	}
	return found, err
}

// report is how a session tells the user about its policy: a warning notice.
func policyReport(status func(context.Context, session.Notice)) func(ctx context.Context, title, description string) {
	return func(ctx context.Context, title, description string) {
		status(ctx, session.Notice{Severity: acp.NoticeWarning, Title: title, Description: description})
	}
}
