package agent

import (
	"context"
	"log/slog"

	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// codeMode is one session's Code Mode: its run_code, bound to the session
// so programs call the session's tools through its pipeline and every
// sub-call shows as its own card. The tools mode itself lives in the
// session's registry scope, the one visibility function: Schemas offers the
// model what the mode allows, Resolve refuses the rest, Get finds run_code
// for the mapping. It sees the session only through the scope, the
// pipeline and the call recorder it is given.
type codeMode struct {
	scope  *registry.Scope
	log    *slog.Logger
	runner *codemode.Runner
}

// newCodeMode installs run_code in scope, over opts (nil: the defaults);
// sub-calls go through pipe and are shown by calls.
func newCodeMode(scope *registry.Scope, log *slog.Logger, opts *codemode.Options, pipe *pipeline.Pipeline, calls *callRecorder, mode codemode.Mode) *codeMode {
	// Programs get each tool's typed value (typed by its output schema in
	// the SDK), not just the text the model would read.
	o := codemode.Options{Logger: log, Values: codemode.TypedValues{}}
	if opts != nil {
		o = *opts
		if o.Logger == nil {
			o.Logger = log
		}
		if o.Values == nil {
			o.Values = codemode.TypedValues{}
		}
	}
	c := &codeMode{scope: scope, log: log, runner: codemode.NewRunner(&o)}
	tool, err := c.runner.Tool(codeHost{code: c, pipe: pipe, calls: calls})
	if err == nil {
		err = scope.SetCodeTool(tool)
	}
	if err != nil {
		panic("agent: run_code does not install: " + err.Error()) // a bug, not a runtime condition
	}
	c.set(mode)
	return c
}

func (c *codeMode) get() codemode.Mode { return c.scope.Mode() }

func (c *codeMode) set(m codemode.Mode) {
	if err := c.scope.SetMode(m); err != nil {
		c.log.Error("tools mode not set", "mode", m, "err", err)
	}
}

// nativeTools are the scope's visible tools other than run_code: the
// bindings a program gets.
func (c *codeMode) nativeTools() []*registry.Def {
	var out []*registry.Def
	for _, d := range c.scope.Visible() {
		if d.Name != codemode.ToolName {
			out = append(out, d)
		}
	}
	return out
}

// prompt is the system-prompt part of Code Mode: in code, the code-only
// rule and the SDK; in both, the SDK; in native, nothing.
func (c *codeMode) prompt() string {
	switch c.get() {
	case codemode.ModeCode:
		return codemode.CodeOnlyRule + "\n\n" + c.runner.SDK(c.nativeTools())
	case codemode.ModeBoth:
		return c.runner.SDK(c.nativeTools())
	}
	return ""
}

// codeHost runs a program's sub-calls as the session's own tool calls: each
// is logged with Parent set (so the editor shows its card, tied to the
// run_code card by its id and _meta), goes through the session's pipeline
// (permission prompts included), and logs its result.
type codeHost struct {
	code  *codeMode
	pipe  *pipeline.Pipeline
	calls *callRecorder
}

func (h codeHost) Tools() []*registry.Def { return h.code.nativeTools() }
func (h codeHost) Lookup(name string) *registry.Def {
	if name == codemode.ToolName {
		return nil // a program cannot start another program
	}
	return h.code.scope.Get(name)
}

// Start and Finish are the session's call recorder (calls.go): a sub-call
// is logged, its output coalesced and its result logged exactly as a call
// the model made.
func (h codeHost) Start(ctx context.Context, _ *registry.Def, c *registry.Call) {
	h.calls.start(ctx, c)
}

// Pipeline is the session's: the run drives its stages so sub-calls' policy
// runs in submission order.
func (h codeHost) Pipeline() *pipeline.Pipeline { return h.pipe }

func (h codeHost) Finish(ctx context.Context, _ *registry.Def, c *registry.Call, res registry.Result) {
	h.calls.finish(ctx, c, res)
}

// toolsModeChoices are the tools modes the tools_mode option offers.
var toolsModeChoices = []session.Choice{
	{ID: string(codemode.ModeNative), Name: "Native", Description: "Every tool is called directly"},
	{ID: string(codemode.ModeCode), Name: "Code", Description: "Only run_code: programs call the tools"},
	{ID: string(codemode.ModeBoth), Name: "Both", Description: "Every tool directly, and run_code"},
}
