package agent

import (
	"context"

	"github.com/acp-bridge/acp-bridge/sysprompt"
)

// sessionPrompt is the fixed part of a session's system prompt, taken once:
// at the first moment something needs it (the first model request, /help,
// /tools), not at session/new, since editors open many sessions that are
// never prompted and git is not free. It never changes afterwards, so the
// endpoint's prefix cache keeps hitting.
type sessionPrompt struct {
	done  bool
	fixed string
	ins   []sysprompt.Instruction
}

// fixedPrompt returns the session's base text, instructions and environment.
func (s *Session) fixedPrompt(ctx context.Context) (string, []sysprompt.Instruction) {
	s.mu.Lock()
	if s.sys.done {
		defer s.mu.Unlock()
		return s.sys.fixed, s.sys.ins
	}
	s.mu.Unlock()

	env := sysprompt.Detect(context.WithoutCancel(ctx), s.roots, sysprompt.DetectOptions{Now: s.a.o.Now()})
	repo := ""
	if env.Git != nil {
		repo = env.Git.Root
	}
	ins, errs := sysprompt.LoadInstructions(sysprompt.InstructionOptions{Workspace: s.cwd, RepoRoot: repo,
		UserDir: s.a.userInstructionsDir(), MaxBytes: s.a.o.MaxInstructionBytes})
	for _, err := range errs {
		s.a.log.Warn("instructions file left out", "session", s.id, "err", err)
	}
	fixed := sysprompt.Fixed(sysprompt.Parts{Instructions: ins, Env: env})

	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sys.done { // a concurrent caller may have been first: keep its bytes
		s.sys = sessionPrompt{done: true, fixed: fixed, ins: ins}
	}
	return s.sys.fixed, s.sys.ins
}

func (a *Agent) userInstructionsDir() string {
	switch a.o.UserInstructionsDir {
	case "":
		return sysprompt.UserDir()
	case "-":
		return ""
	}
	return a.o.UserInstructionsDir
}

// systemPrompt is the system message: the fixed part, then the lines of
// the current mode and tools mode (they change only when the user changes
// a mode, the one break of the prompt cache besides compaction).
func (s *Session) systemPrompt(ctx context.Context) string {
	fixed, _ := s.fixedPrompt(ctx)
	return sysprompt.Join(fixed, s.modePrompt(), s.codePrompt())
}
