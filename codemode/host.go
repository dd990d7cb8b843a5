package codemode

import (
	"context"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

// ToolSet is where a host finds tools; *registry.Scope is one.
type ToolSet interface {
	Get(name string) *registry.Def
	Visible() []*registry.Def
}

// PipelineHost runs sub-calls through a pipeline, without a session: for
// embedding run_code outside the agent, tests and benchmarks. OnStart and
// OnResult, when set, observe each sub-call (they stand in for the events
// an agent logs).
type PipelineHost struct {
	Pipeline *pipeline.Pipeline
	Set      ToolSet
	OnStart  func(c *registry.Call)
	OnResult func(c *registry.Call, r registry.Result)
}

var _ Host = (*PipelineHost)(nil)

// Tools implements Host.
func (h *PipelineHost) Tools() []*registry.Def { return h.Set.Visible() }

// Lookup implements Host.
func (h *PipelineHost) Lookup(name string) *registry.Def { return h.Set.Get(name) }

// Start implements Host.
func (h *PipelineHost) Start(_ context.Context, _ *registry.Def, c *registry.Call) {
	if h.OnStart != nil {
		h.OnStart(c)
	}
}

// Execute implements Host.
func (h *PipelineHost) Execute(ctx context.Context, d *registry.Def, c *registry.Call) registry.Result {
	p := h.Pipeline
	if p == nil {
		p = pipeline.New(nil)
	}
	r := p.Execute(ctx, d, c)
	if h.OnResult != nil {
		h.OnResult(c, r)
	}
	return r
}
