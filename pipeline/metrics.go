package pipeline

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Metrics counts dispatched calls per tool: calls, failures and latency.
// Calls stopped by policy never dispatch and are not counted here.
type Metrics struct {
	mu    sync.Mutex
	tools map[string]*ToolStats
	now   func() time.Time
}

// ToolStats are one tool's figures.
type ToolStats struct {
	Calls    int64
	Failures int64
	Total    time.Duration // summed latency; Total/Calls is the mean
	Max      time.Duration
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics { return &Metrics{tools: map[string]*ToolStats{}, now: time.Now} }

// Middleware measures every call it wraps. List it first to measure the
// whole dispatch, retries included.
func (m *Metrics) Middleware() Middleware {
	return func(d *registry.Def, next Next) Next {
		return func(ctx context.Context, c *registry.Call) registry.Result {
			start := m.now()
			finished := false
			defer func() {
				// A panic from an inner layer passes through here on its way
				// to the pipeline's recovery: count it as a failure.
				if !finished {
					m.record(d.Name, m.now().Sub(start), true)
				}
			}()
			r := next(ctx, c)
			finished = true
			m.record(d.Name, m.now().Sub(start), r.IsError)
			return r
		}
	}
}

func (m *Metrics) record(name string, took time.Duration, failed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.tools[name]
	if s == nil {
		s = &ToolStats{}
		m.tools[name] = s
	}
	s.Calls++
	if failed {
		s.Failures++
	}
	s.Total += took
	s.Max = max(s.Max, took)
}

// Snapshot returns a copy of the figures, by tool name.
func (m *Metrics) Snapshot() map[string]ToolStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]ToolStats, len(m.tools))
	for name, s := range maps.All(m.tools) {
		out[name] = *s
	}
	return out
}
