package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
)

// command is one slash command. run writes its output with s.notice and
// returns the stop reason of the turn it ran in.
type command struct {
	session.Command
	run func(s *Session, ctx context.Context, arg string) acp.StopReason
}

// commands is the catalog, in the order /help lists it.
var commands []command

func init() {
	commands = []command{
		{session.Command{Name: "help", Description: "List the commands"}, (*Session).cmdHelp},
		{session.Command{Name: "clear", Description: "Start a fresh context: the model forgets the conversation so far"}, (*Session).cmdClear},
		{session.Command{Name: "compact", Description: "Replace the conversation with a summary written by the model", Hint: "what the summary should keep (optional)"}, (*Session).cmdCompact},
		{session.Command{Name: "mode", Description: "Show or set the permission mode", Hint: "ask | accept-edits | plan | bypass"}, (*Session).cmdMode},
		{session.Command{Name: "model", Description: "Show or choose the model", Hint: "model id"}, (*Session).cmdModel},
		{session.Command{Name: "tools", Description: "List the tools the model can call"}, (*Session).cmdTools},
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

// announce sends what the editor shows about a session that it has just
// learned of (session/new, load, resume): the command catalog.
func (s *Session) announce(ctx context.Context) {
	s.emit(ctx, session.New(commandCatalog()))
}

// announceAfterReply announces the session once the response that names it
// is on the wire, and holds the session's first prompt until then, so the
// catalog always comes before anything of a turn (a fixed order for editors
// and transcripts alike).
func (s *Session) announceAfterReply(ctx context.Context) {
	ready := make(chan struct{})
	s.mu.Lock()
	s.ready = ready
	s.mu.Unlock()
	acp.AfterReply(ctx, func() {
		defer close(ready)
		s.announce(ctx)
	})
}

// awaitAnnounced waits until the session has been announced (see
// announceAfterReply) or ctx ends.
func (s *Session) awaitAnnounced(ctx context.Context) {
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
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
func (s *Session) turn(ctx context.Context, text string) acp.StopReason {
	if name, arg, ok := parseCommand(text); ok {
		for _, c := range commands {
			if c.Name == name {
				return c.run(s, ctx, arg)
			}
		}
		s.notice(ctx, fmt.Sprintf("Unknown command `/%s`. %s", name, commandList()))
		return acp.StopEndTurn
	}
	reason := s.run(ctx, text)
	if s.provider() != nil && ctx.Err() == nil {
		s.maybeTitle(ctx, text)
	}
	return reason
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

func (s *Session) cmdHelp(ctx context.Context, _ string) acp.StopReason {
	s.notice(ctx, commandList())
	return acp.StopEndTurn
}

func (s *Session) cmdClear(ctx context.Context, _ string) acp.StopReason {
	n := len(s.history())
	s.emit(ctx, session.New(session.ContextReset{Reason: "clear"}))
	s.recordUsage(ctx, &model.Usage{})
	s.notice(ctx, fmt.Sprintf("Context cleared: the model no longer sees the %d earlier messages. The transcript above stays for you.", n))
	return acp.StopEndTurn
}

const compactInstruction = "Summarise the conversation so far for a fresh context that will continue it. " +
	"Keep the user's goals and constraints, decisions made, files and code touched (with paths), " +
	"the current state of the work and what remains to do. Be complete but concise; write only the summary."

// cmdCompact asks the model for a summary of the history and replaces the
// history with it.
func (s *Session) cmdCompact(ctx context.Context, arg string) acp.StopReason {
	p := s.provider()
	if p == nil {
		s.notice(ctx, noModelMessage(s.a.o.ModelHint))
		return acp.StopEndTurn
	}
	hist := s.history()
	if len(hist) == 0 {
		s.notice(ctx, "Nothing to compact: the context is empty.")
		return acp.StopEndTurn
	}
	instr := compactInstruction
	if arg != "" {
		instr += " Pay particular attention to: " + arg
	}
	req := &model.Request{Messages: append(append([]model.Message{{Role: model.RoleSystem, Content: s.systemPrompt()}}, hist...),
		model.Message{Role: model.RoleUser, Content: instr})}
	s.notice(ctx, fmt.Sprintf("Compacting %d messages…\n\n", len(hist)))
	var summary strings.Builder
	for ev, err := range p.Stream(ctx, req) {
		if err != nil {
			if ctx.Err() != nil {
				return acp.StopCancelled
			}
			s.notice(ctx, fmt.Sprintf("\n\nCompaction failed, the context is unchanged: %v", err))
			return acp.StopEndTurn
		}
		switch ev.Kind {
		case model.EventText:
			summary.WriteString(ev.Text)
		case model.EventRetry:
			summary.Reset()
			s.notice(ctx, retryMessage(ev.Retry))
		case model.EventUsage:
			s.recordUsage(ctx, ev.Usage)
		}
	}
	text := strings.TrimSpace(summary.String())
	if text == "" {
		s.notice(ctx, "Compaction failed, the context is unchanged: the model returned no summary.")
		return acp.StopEndTurn
	}
	// Applying the reset replaces the context with the summary (state.go).
	s.emit(ctx, session.New(session.ContextReset{Reason: "compact", Summary: text}))
	s.notice(ctx, "Compacted the context into this summary:\n\n"+text)
	return acp.StopEndTurn
}

func (s *Session) cmdMode(ctx context.Context, arg string) acp.StopReason {
	if arg == "" {
		cur := s.mode()
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
	if err := s.setControl(ctx, mapping.ConfigMode, arg); err != nil {
		s.notice(ctx, fmt.Sprintf("Unknown mode `%s`; the modes are %s.", arg, modeIDs()))
		return acp.StopEndTurn
	}
	s.notice(ctx, fmt.Sprintf("Permission mode is now **%s**; it applies from the next tool call.", arg))
	return acp.StopEndTurn
}

func (s *Session) cmdModel(ctx context.Context, arg string) acp.StopReason {
	ms := s.a.models()
	if len(ms) == 0 {
		s.notice(ctx, noModelMessage(s.a.o.ModelHint))
		return acp.StopEndTurn
	}
	if arg == "" {
		cur := s.currentModel()
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
	if err := s.setControl(ctx, mapping.ConfigModel, arg); err != nil {
		s.notice(ctx, fmt.Sprintf("Unknown model `%s`; the models are %s.", arg, s.a.modelIDs()))
		return acp.StopEndTurn
	}
	s.notice(ctx, fmt.Sprintf("Model is now **%s**; the next request goes to it.", arg))
	return acp.StopEndTurn
}

func (s *Session) cmdTools(ctx context.Context, _ string) acp.StopReason {
	defs := s.scope.Visible()
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools visible to the model", len(defs))
	fmt.Fprintf(&b, " (tools mode %s)", s.code.get())
	fmt.Fprintf(&b, "; permission mode **%s**:\n", s.mode())
	for _, d := range defs {
		desc, _, _ := strings.Cut(d.Description, ". ")
		desc = strings.TrimSuffix(desc, ".")
		fmt.Fprintf(&b, "\n- `%s`: %s", d.Name, desc)
		if ReadOnly(d, []byte("{}")) {
			b.WriteString(" (read-only)")
		}
	}
	s.notice(ctx, b.String())
	return acp.StopEndTurn
}

// retryMessage is the short line shown when a model request is retried.
func retryMessage(r *model.RetryInfo) string {
	reason := "the request failed"
	if r.Err != nil {
		reason = r.Err.Error()
	}
	return fmt.Sprintf("\n\n*Model request failed (%s); retrying in %.1fs, attempt %d of %d…*\n\n", reason, r.Delay.Seconds(), r.Attempt, r.Max)
}
