package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/profiles"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/subagent"
	"github.com/acp-bridge/acp-bridge/sysprompt"
)

// ProjectProfilesDir is where a project keeps its subagent profiles,
// beside its settings (.acp-bridge/settings.yaml).
var ProjectProfilesDir = filepath.Join(".acp-bridge", "agents")

// sessionOnlyTools are tools whose effect belongs to the session, not to a
// subagent: todo_write's list is the session's plan, and a question ends
// the session's turn to wait for the user. A subagent never has them.
var sessionOnlyTools = []string{"todo_write", "question"}

// subagents is one session's delegation: the profiles in effect (built in,
// the user's, the project's), the task tool that lists them, local to the
// session's scope (so a subagent, whose scope is another, cannot start
// one), and the launcher that runs a subagent for a task call. A
// subagent's calls go through the session's pipeline (rules, hooks, mode,
// permission prompts) and its call recorder (cards under the task's); its
// usage adds up in the session's meter.
type subagents struct {
	reg    *registry.Registry
	scope  *registry.Scope
	dirs   []profiles.Dir
	log    *slog.Logger
	status func(context.Context, session.Notice)
	models func() []ModelChoice

	pipe        *pipeline.Pipeline
	calls       *callRecorder
	prompts     *prompts
	ctl         *controls
	meter       *meter
	files       *Files
	jobs        *jobs.Table
	rules       registry.RuleChecker
	memo        *registry.Memo
	cwd         string
	roots       []string
	maxRequests int

	mu         sync.Mutex // guards what follows; taken alone
	key        string     // the profiles the installed task tool lists
	unregister func()
	told       string // the profile errors last told, so each is told once
}

// profileDirs are where a session's profiles come from: the user's
// (beside the user's AGENTS.md and config file), then the project's.
func (a *Agent) profileDirs(cwd string) []profiles.Dir {
	var dirs []profiles.Dir
	user := a.o.UserProfilesDir
	switch user {
	case "":
		if d := sysprompt.UserDir(); d != "" {
			dirs = append(dirs, profiles.Dir{Path: filepath.Join(d, "agents"), Kind: "user"})
		}
	case "-":
	default:
		dirs = append(dirs, profiles.Dir{Path: user, Kind: "user"})
	}
	return append(dirs, profiles.Dir{Path: filepath.Join(cwd, ProjectProfilesDir), Kind: "project"})
}

// reload reads the profiles (at each turn's start: a file edited since the
// last turn takes effect now) and, when they changed, installs the task
// tool that lists them. A profile file that cannot be used is left out and
// the user is told, once.
func (g *subagents) reload(ctx context.Context) {
	set, errs := profiles.Load(g.check, g.dirs...)
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	told := strings.Join(msgs, "\n")
	g.mu.Lock()
	tell := told != "" && told != g.told
	g.told = told
	g.mu.Unlock()
	if tell {
		g.status(ctx, session.Notice{Severity: acp.NoticeWarning, Title: "A subagent profile was left out", Description: told})
	}
	g.install(set)
}

// install makes the task tool list set's profiles, unless it does already.
// A new session installs it with the built-in profiles, without reading any
// file: a load's replay draws task cards with it before any turn.
func (g *subagents) install(set *profiles.Set) {
	var b strings.Builder
	for _, p := range set.List() {
		fmt.Fprintf(&b, "%q %q %q %q %v %v %v\x00", p.Name, p.Description, p.Model, p.Instructions, p.Tools, p.Deny, p.ReadOnly)
	}
	g.mu.Lock()
	install := b.String() != g.key
	old := g.unregister
	g.mu.Unlock()
	if !install {
		return
	}
	d, err := subagent.TaskTool(set, g)
	if err != nil {
		g.log.Error("the task tool does not define", "err", err) // a bug: the profiles were checked
		return
	}
	if old != nil {
		old()
	}
	unregister, err := g.scope.Register(d)
	if err != nil {
		g.log.Error("the task tool does not install", "err", err)
		return
	}
	g.mu.Lock()
	g.key, g.unregister = b.String(), unregister
	g.mu.Unlock()
}

// check refuses a profile whose tools or model do not exist here.
func (g *subagents) check(p profiles.Profile) error {
	if _, err := g.scopeFor(p); err != nil {
		return err
	}
	if p.Model != "" && g.model(p.Model) == nil {
		return fmt.Errorf("model %q is not one of this agent's (%s)", p.Model, g.modelIDs())
	}
	return nil
}

// model is the choice a profile names, by id or by name.
func (g *subagents) model(name string) *ModelChoice {
	ms := g.models()
	if i := slices.IndexFunc(ms, func(m ModelChoice) bool { return m.ID == name }); i >= 0 {
		return &ms[i]
	}
	if i := slices.IndexFunc(ms, func(m ModelChoice) bool { return m.Name == name }); i >= 0 {
		return &ms[i]
	}
	return nil
}

func (g *subagents) modelIDs() string {
	var ids []string
	for _, m := range g.models() {
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return "none is configured"
	}
	return strings.Join(ids, ", ")
}

// scopeFor is the tools of a subagent of profile p: the global tools
// (never the session's own, nor its MCP servers'), through the profile's
// restrictions with the registry's semantics (they intersect; an unknown
// name is refused). A read-only profile keeps only the tools whose facts
// say they change nothing.
func (g *subagents) scopeFor(p profiles.Profile) (*registry.Scope, error) {
	sc := g.reg.NewScope()
	if err := sc.SetMode(registry.Native); err != nil {
		return nil, err
	}
	known := sc.KnownNames()
	var rs []registry.Restriction
	if deny := slices.DeleteFunc(slices.Clone(sessionOnlyTools), func(n string) bool { return !slices.Contains(known, n) }); len(deny) > 0 {
		rs = append(rs, registry.Restriction{Deny: deny})
	}
	if p.ReadOnly {
		allow := []string{}
		for _, n := range known {
			if d := g.reg.Get(n, nil); d != nil && d.Facts.ReadOnly {
				allow = append(allow, n)
			}
		}
		rs = append(rs, registry.Restriction{Allow: allow})
	}
	if p.Tools != nil {
		rs = append(rs, registry.Restriction{Allow: p.Tools})
	}
	if len(p.Deny) > 0 {
		rs = append(rs, registry.Restriction{Deny: p.Deny})
	}
	for _, r := range rs {
		if _, err := sc.Restrict(r); err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
	}
	return sc, nil
}

// ReadOnly reports whether every tool profile p gives is read-only.
func (g *subagents) ReadOnly(p profiles.Profile) bool {
	sc, err := g.scopeFor(p)
	if err != nil {
		return false
	}
	for _, d := range sc.Visible() {
		if !d.Facts.ReadOnly {
			return false
		}
	}
	return true
}

// Launch runs the subagent of task call c.
func (g *subagents) Launch(ctx context.Context, c *registry.Call, p profiles.Profile, prompt string, sch *registry.Structured) (string, error) {
	scope, err := g.scopeFor(p)
	if err != nil {
		return "", fmt.Errorf("profile %s: %w", p.Name, err)
	}
	choice := g.ctl.model()
	if p.Model != "" {
		if choice = g.model(p.Model); choice == nil {
			return "", fmt.Errorf("profile %s: model %q is not one of this agent's (%s)", p.Name, p.Model, g.modelIDs())
		}
	}
	if choice == nil || choice.Provider == nil {
		return "", errors.New("no model is configured for the subagent")
	}
	return subagent.Run(ctx, &subagent.Spec{
		Name: p.Name, Parent: c.ID, Provider: choice.Provider,
		System: g.prompts.forSubagent(ctx, g.ctl.modePrompt(), p.Instructions),
		Prompt: prompt, Tools: scope, Pipeline: g.pipe, Schema: sch, MaxRequests: g.maxRequests,
		NewCall: func(id, name string, args json.RawMessage) *registry.Call {
			return &registry.Call{ID: id, Name: name, Args: args, Parent: c.ID, Agent: p.Name,
				Cwd: g.cwd, Roots: g.roots, Files: g.files, Jobs: g.jobs, Rules: g.rules, Memo: g.memo}
		},
		Start:  g.calls.start,
		Finish: g.calls.finish,
		Usage: func(ctx context.Context, u *model.Usage) {
			g.meter.subagent(ctx, u, choice, p.Name)
		},
	})
}
