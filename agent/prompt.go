package agent

import (
	"context"

	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/sysprompt"
)

// prompts is the session's system prompt: the fixed part, taken from the
// workspace once and logged; the client's prompt (sysprompt.go); and the
// mode lines, composed last. It changes when what the model is told about
// the session changes.
type prompts struct {
	a     *Agent
	id    string
	roots []string // roots[0] is the cwd
	emit  func(ctx context.Context, ev session.Event)
	// folded reads the folded state's fixed prompt (nil until taken) and
	// client prompt.
	folded func() (*session.SystemPrompt, *session.ClientPrompt)
	// modes are the lines of the current mode and tools mode.
	modes func() []string
}

// fixed returns the fixed part of the session's system prompt (base
// text, AGENTS.md files, environment) and the instruction files in it. It
// is taken once, the first time something needs it (the first model
// request, /help, /tools) rather than at session/new, since editors open
// many sessions that are never prompted and git is not free; then it is
// logged, so it never changes for the session, not even across a reload:
// the endpoint's prefix cache keeps hitting and the model sees one session.
func (p *prompts) fixed(ctx context.Context) (string, []sysprompt.FileInfo) {
	sp, _ := p.folded()
	if sp == nil {
		p.emit(ctx, session.New(p.take(ctx)))
		sp, _ = p.folded()
	}
	files := make([]sysprompt.FileInfo, 0, len(sp.Instructions))
	for _, f := range sp.Instructions {
		files = append(files, sysprompt.FileInfo{Path: f.Path, Size: f.Size, Shown: f.Shown, Cut: f.Cut})
	}
	return sp.Text, files
}

// take looks at the workspace and composes the fixed prompt.
func (p *prompts) take(ctx context.Context) session.SystemPrompt {
	env := sysprompt.Detect(context.WithoutCancel(ctx), p.roots, sysprompt.DetectOptions{Now: p.a.o.Now()})
	repo := ""
	if env.Git != nil {
		repo = env.Git.Root
	}
	ins, errs := sysprompt.LoadInstructions(sysprompt.InstructionOptions{Workspace: p.roots[0], RepoRoot: repo,
		UserDir: p.a.o.userInstructionsDir(), MaxBytes: p.a.o.MaxInstructionBytes})
	for _, err := range errs {
		p.a.log.Warn("instructions file left out", "session", p.id, "err", err)
	}
	sp := session.SystemPrompt{Text: sysprompt.Fixed(sysprompt.Parts{Instructions: ins, Env: env}), Env: env.Render()}
	for _, in := range ins {
		i := in.Info()
		sp.Instructions = append(sp.Instructions, session.InstructionFile{Path: i.Path, Size: i.Size, Shown: i.Shown, Cut: i.Cut})
	}
	return sp
}

func (o *Options) userInstructionsDir() string {
	switch o.UserInstructionsDir {
	case "":
		return sysprompt.UserDir()
	case "-":
		return ""
	}
	return o.UserInstructionsDir
}

// system is the system message: the fixed part, the client's prompt when
// it sent one (sysprompt.go), then the lines of the current mode and tools
// mode (they change only when the user changes a mode, the one break of
// the prompt cache besides compaction).
func (p *prompts) system(ctx context.Context) string {
	fixed, _ := p.fixed(ctx)
	sp, client := p.folded()
	env := ""
	if sp != nil {
		env = sp.Env
	}
	return ComposeSystemPrompt(fixed, env, client, p.modes()...)
}

// forSubagent is a subagent's system prompt: the session's fixed part and
// the client's prompt as the session's own model has them (instructions,
// AGENTS.md files, environment), then tail (the permission mode's line,
// which governs its calls too, and its profile's instructions). Not the
// Code Mode part: a subagent calls its tools directly.
func (p *prompts) forSubagent(ctx context.Context, tail ...string) string {
	fixed, _ := p.fixed(ctx)
	sp, client := p.folded()
	env := ""
	if sp != nil {
		env = sp.Env
	}
	return ComposeSystemPrompt(fixed, env, client, tail...)
}
