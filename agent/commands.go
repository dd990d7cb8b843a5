package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/sysprompt"
)

// command is one slash command: an operation on a session, kept in this
// catalog rather than on the session type, so adding one changes only
// this file. run writes its output with s.notice and returns the stop
// reason of the turn it ran in.
type command struct {
	session.Command
	run func(ctx context.Context, s *commandEnv, arg string) acp.StopReason
}

// commandEnv is what a slash command may use of its session: it tells the
// user (notice) and acts through the session's parts and the operations
// named here, never on the conversation itself (its locks, state and log
// are the turn loop's). Made by turn for the command it runs.
type commandEnv struct {
	cwd       string
	modelHint string // what to say when no model is configured (Options.ModelHint)
	notice    func(ctx context.Context, text string)
	ctl       *controls
	prompts   *prompts
	scope     *registry.Scope
	jobs      *jobs.Table
	policy    *userPolicy
	// contextLen is how many messages the model's context holds.
	contextLen func() int
	// clear empties the model's context (and reports its size).
	clear func(ctx context.Context)
	// compact replaces the context's first n messages with a summary,
	// keeping what arg asks for (compaction.go).
	compact func(ctx context.Context, arg string, n int) error
	// call runs a call the session makes itself (not the model) through
	// the pipeline, as a card of its own; the recorder names it from want.
	call func(ctx context.Context, want, tool string, args json.RawMessage) registry.Result
	// rewind takes back earlier prompts (rewindcmd.go).
	rewind *rewinder
}

// commands is the catalog, in the order /help lists it.
var commands []command

func init() {
	commands = []command{
		{session.Command{Name: "help", Description: "List the commands"}, cmdHelp},
		{session.Command{Name: "clear", Description: "Start a fresh context: the model forgets the conversation so far"}, cmdClear},
		{session.Command{Name: "compact", Description: "Replace the conversation with a summary written by the model", Hint: "what the summary should keep (optional)"}, cmdCompact},
		{session.Command{Name: "init", Description: "Write a starter AGENTS.md (project instructions for agents) from a look at the workspace"}, cmdInit},
		{session.Command{Name: "mode", Description: "Show or set the permission mode", Hint: "ask | accept-edits | plan | bypass"}, cmdMode},
		{session.Command{Name: "model", Description: "Show or choose the model", Hint: "model id"}, cmdModel},
		{session.Command{Name: "tools", Description: "List the tools the model can call"}, cmdTools},
		{session.Command{Name: "jobs", Description: "List the background jobs the model started in this session"}, cmdJobs},
		{session.Command{Name: "rewind", Description: "Take back a prompt and everything after it, in the conversation and in the files the agent changed; without a number, list the prompts", Hint: "N [conversation] (optional)"}, cmdRewind},
		{session.Command{Name: "undo", Description: "Take back the last prompt and what the agent did after it (/rewind of the last prompt)"}, cmdUndo},
		{session.Command{Name: "permissions", Description: "List the permission rules and hooks in effect and where each comes from; remove a remembered rule", Hint: "remove N (optional)"}, cmdPermissions},
	}
}

// commandCatalog is what available_commands_update advertises.
func commandCatalog() session.Commands {
	out := session.Commands{Commands: make([]session.Command, 0, len(commands))}
	for _, c := range commands {
		out.Commands = append(out.Commands, c.Command)
	}
	return out
}

// announcer sends what the editor shows about a session it has just
// learned of (session/new, load, resume, fork): the command catalog. It
// holds the session's first prompt until then, so the catalog always comes
// before anything of a turn (a fixed order for editors and transcripts).
type announcer struct {
	emit func(ctx context.Context, ev session.Event)
	// after runs f once the response to the request in ctx is on the
	// wire (acp.AfterReply; tests hold it).
	after func(ctx context.Context, f func())

	mu    sync.Mutex
	ready chan struct{} // closed once announced; nil: nothing to wait for
}

// afterReply announces the session once the response that names it is on
// the wire.
func (n *announcer) afterReply(ctx context.Context) {
	ready := make(chan struct{})
	n.mu.Lock()
	n.ready = ready
	n.mu.Unlock()
	n.after(ctx, func() {
		defer close(ready)
		n.emit(ctx, session.New(commandCatalog()))
	})
}

// wait returns once the session has been announced or ctx ends.
func (n *announcer) wait(ctx context.Context) {
	n.mu.Lock()
	ready := n.ready
	n.mu.Unlock()
	if ready == nil {
		return
	}
	select {
	case <-ready:
	case <-ctx.Done():
	}
}

// parseCommand splits "/name args" off the prompt text.
func parseCommand(text string) (name, arg string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") || strings.HasPrefix(t, "//") {
		return "", "", false
	}
	name, arg, _ = strings.Cut(t[1:], " ")
	if name == "" || strings.ContainsAny(name, "/\n\t") {
		return "", "", false // "/usr/bin/…" or a lone slash is a prompt, not a command
	}
	return name, strings.TrimSpace(arg), true
}

// turn runs one prompt: a slash command without a model request, else the
// model loop; the first exchange names the session.
func (s *conversation) turn(ctx context.Context, text string) (acp.StopReason, *acp.Error) {
	// What the turn runs (tool calls, jobs, every hook, a command's calls)
	// is confined, under the project's settings as the file is now
	// (sandbox.go).
	ctx = s.sbx.confine(ctx, s.status)
	if name, arg, ok := parseCommand(text); ok {
		for _, c := range commands {
			if c.Name == name {
				return c.run(ctx, &commandEnv{cwd: s.cwd, modelHint: s.a.o.ModelHint, notice: s.notice,
					ctl: s.ctl, prompts: s.prompts, scope: s.scope, jobs: s.jobs, policy: s.policy,
					contextLen: func() int { return len(s.history()) },
					clear: func(ctx context.Context) {
						s.emit(ctx, session.New(session.ContextReset{Reason: "clear"}))
						s.meter.record(ctx, &model.Usage{})
					},
					compact: func(ctx context.Context, arg string, n int) error {
						return s.compactContext(ctx, session.CompactManual, arg, n)
					},
					call: func(ctx context.Context, want, tool string, args json.RawMessage) registry.Result {
						id := s.calls.ids(want)[0] // a call of its own, not the model's (registry/callid.go)
						return s.runTools(ctx, []model.ToolCall{{ID: id, Name: tool, Arguments: args}})[0]
					}, rewind: s.rw}, arg), nil
			}
		}
		s.notice(ctx, fmt.Sprintf("Unknown command `/%s`. %s", name, commandList()))
		return acp.StopEndTurn, nil
	}
	reason, failure := s.run(ctx, text)
	if failure == nil && ctx.Err() == nil {
		s.policy.stopped(ctx, reason)
	}
	if failure == nil && s.ctl.provider() != nil && ctx.Err() == nil {
		if ev, ok := titleEvent(s.ctl.read().title, text, s.a.o.Now()); ok {
			s.emit(ctx, session.New(ev))
		}
	}
	return reason, failure
}

func commandList() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "\n- `/%s", c.Name)
		if c.Hint != "" {
			fmt.Fprintf(&b, " [%s]", c.Hint)
		}
		fmt.Fprintf(&b, "`: %s", c.Description)
	}
	return b.String()
}

func cmdHelp(ctx context.Context, s *commandEnv, _ string) acp.StopReason {
	_, ins := s.prompts.fixed(ctx)
	s.notice(ctx, commandList()+"\n\n"+sysprompt.Summary(ins))
	return acp.StopEndTurn
}

func cmdClear(ctx context.Context, s *commandEnv, _ string) acp.StopReason {
	n := s.contextLen()
	s.clear(ctx)
	s.notice(ctx, fmt.Sprintf("Context cleared: the model no longer sees the %d earlier messages. The transcript above stays for you.", n))
	return acp.StopEndTurn
}

// cmdCompact replaces the whole context with a summary the model writes,
// reported like an automatic compaction (compaction.go).
func cmdCompact(ctx context.Context, s *commandEnv, arg string) acp.StopReason {
	if s.ctl.provider() == nil {
		s.notice(ctx, noModelMessage(s.modelHint))
		return acp.StopEndTurn
	}
	n := s.contextLen()
	if n == 0 {
		s.notice(ctx, "Nothing to compact: the context is empty.")
		return acp.StopEndTurn
	}
	if err := s.compact(ctx, arg, n); err != nil && ctx.Err() != nil {
		return acp.StopCancelled
	}
	return acp.StopEndTurn
}

func cmdMode(ctx context.Context, s *commandEnv, arg string) acp.StopReason {
	if arg == "" {
		cur := s.ctl.mode()
		var b strings.Builder
		fmt.Fprintf(&b, "Permission mode: **%s**\n", cur)
		for _, m := range PermissionModes {
			mark := " "
			if m.ID == cur {
				mark = "•"
			}
			fmt.Fprintf(&b, "\n%s `%s`: %s", mark, m.ID, m.Description)
		}
		b.WriteString("\n\nSwitch with `/mode <id>`.")
		s.notice(ctx, b.String())
		return acp.StopEndTurn
	}
	if err := s.ctl.set(ctx, mapping.ConfigMode, arg); err != nil {
		s.notice(ctx, fmt.Sprintf("Unknown mode `%s`; the modes are %s.", arg, modeIDs()))
		return acp.StopEndTurn
	}
	s.notice(ctx, fmt.Sprintf("Permission mode is now **%s**; it applies from the next tool call.", arg))
	return acp.StopEndTurn
}

func cmdModel(ctx context.Context, s *commandEnv, arg string) acp.StopReason {
	ms := s.ctl.choices()
	if len(ms) == 0 {
		s.notice(ctx, noModelMessage(s.modelHint))
		return acp.StopEndTurn
	}
	if arg == "" {
		cur := s.ctl.model()
		var b strings.Builder
		fmt.Fprintf(&b, "Model: **%s**\n", cur.ID)
		for _, m := range ms {
			mark := " "
			if m.ID == cur.ID {
				mark = "•"
			}
			fmt.Fprintf(&b, "\n%s `%s`", mark, m.ID)
			if m.Description != "" {
				fmt.Fprintf(&b, ": %s", m.Description)
			}
		}
		b.WriteString("\n\nSwitch with `/model <id>`.")
		s.notice(ctx, b.String())
		return acp.StopEndTurn
	}
	if err := s.ctl.set(ctx, mapping.ConfigModel, arg); err != nil {
		s.notice(ctx, fmt.Sprintf("Unknown model `%s`; the models are %s.", arg, s.ctl.modelIDs()))
		return acp.StopEndTurn
	}
	s.notice(ctx, fmt.Sprintf("Model is now **%s**; the next request goes to it.", arg))
	return acp.StopEndTurn
}

func cmdTools(ctx context.Context, s *commandEnv, _ string) acp.StopReason {
	defs := s.scope.Visible()
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools visible to the model", len(defs))
	fmt.Fprintf(&b, " (tools mode %s)", s.scope.Mode())
	fmt.Fprintf(&b, "; permission mode **%s**:\n", s.ctl.mode())
	for _, d := range defs {
		desc, _, _ := strings.Cut(d.Description, ". ")
		desc = strings.TrimSuffix(desc, ".")
		fmt.Fprintf(&b, "\n- `%s`: %s", d.Name, desc)
		if d.Facts.ReadOnly {
			b.WriteString(" (read-only)")
		}
	}
	_, ins := s.prompts.fixed(ctx)
	s.notice(ctx, b.String()+"\n\n"+sysprompt.Summary(ins))
	return acp.StopEndTurn
}

// discardMessage follows an answer a retry replaced with a different one.
const discardMessage = "\n\n*The retried request answered differently; the answer above is abandoned and the new one follows.*\n\n"

// retryNotice is what the user sees when a model request is retried: a
// warning notice, or the short line it always was.
func retryNotice(r *model.RetryInfo) session.Notice {
	reason := "the request failed"
	if r.Err != nil {
		reason = r.Err.Error()
	}
	return session.Notice{
		Text:     fmt.Sprintf("\n\n*Model request failed (%s); retrying in %.1fs, attempt %d of %d…*\n\n", reason, r.Delay.Seconds(), r.Attempt, r.Max),
		Severity: acp.NoticeWarning, Title: "Retrying the model request",
		Description: fmt.Sprintf("%s. Attempt %d of %d in %.1fs.", reason, r.Attempt, r.Max, r.Delay.Seconds()),
	}
}
