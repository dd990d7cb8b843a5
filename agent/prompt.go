package agent

import (
	"context"

	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/sysprompt"
)

// fixedPrompt returns the fixed part of the session's system prompt (base
// text, AGENTS.md files, environment) and the instruction files in it. It
// is taken once, the first time something needs it (the first model
// request, /help, /tools) rather than at session/new, since editors open
// many sessions that are never prompted and git is not free; then it is
// logged, so it never changes for the session, not even across a reload:
// the endpoint's prefix cache keeps hitting and the model sees one session.
func (s *conversation) fixedPrompt(ctx context.Context) (string, []sysprompt.FileInfo) {
	s.mu.Lock()
	sp := s.st.system
	s.mu.Unlock()
	if sp == nil {
		s.emit(ctx, session.New(s.takePrompt(ctx)))
		s.mu.Lock()
		sp = s.st.system
		s.mu.Unlock()
	}
	files := make([]sysprompt.FileInfo, 0, len(sp.Instructions))
	for _, f := range sp.Instructions {
		files = append(files, sysprompt.FileInfo{Path: f.Path, Size: f.Size, Shown: f.Shown, Cut: f.Cut})
	}
	return sp.Text, files
}

// takePrompt looks at the workspace and composes the fixed prompt.
func (s *conversation) takePrompt(ctx context.Context) session.SystemPrompt {
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
	sp := session.SystemPrompt{Text: sysprompt.Fixed(sysprompt.Parts{Instructions: ins, Env: env}), Env: env.Render()}
	for _, in := range ins {
		i := in.Info()
		sp.Instructions = append(sp.Instructions, session.InstructionFile{Path: i.Path, Size: i.Size, Shown: i.Shown, Cut: i.Cut})
	}
	return sp
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

// systemPrompt is the system message: the fixed part, the client's prompt
// when it sent one (sysprompt.go), then the lines of the current mode and
// tools mode (they change only when the user changes a mode, the one break
// of the prompt cache besides compaction).
func (s *conversation) systemPrompt(ctx context.Context) string {
	fixed, _ := s.fixedPrompt(ctx)
	s.mu.Lock()
	env := ""
	if s.st.system != nil {
		env = s.st.system.Env
	}
	client := s.st.client
	s.mu.Unlock()
	return ComposeSystemPrompt(fixed, env, client, s.ctl.modePrompt(), s.code.prompt())
}
