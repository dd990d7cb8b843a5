package agent

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/catalog"
	"github.com/acp-bridge/acp-bridge/session"
)

// The meter's usage event: the size is the configured window, else the
// reported one, else the default; the cost is the running total plus this
// call's; estimates are shown but not counted as the turn's tokens.
func TestMeter(t *testing.T) {
	a := New(&stClient{}, Options{Models: []ModelChoice{
		{ID: "m/priced", Name: "p", ContextWindow: 64000, Price: &Price{Input: 2, CachedInput: 1, Output: 10}},
		{ID: "m/plain", Name: "q"},
	}})
	tests := []struct {
		name     string
		model    string
		cost     float64 // the folded running total
		window   int     // the last reported window
		u        *model.Usage
		wantSize int
		wantCost float64
		currency string
	}{
		{"configured window, priced", "m/priced", 0.5, 32000,
			&model.Usage{InputTokens: 1000, CachedTokens: 400, OutputTokens: 100, ContextWindow: 8000},
			64000, 0.5 + (600*2+400*1+100*10)/1e6, "USD"},
		{"reported window", "m/plain", 0, 0, &model.Usage{InputTokens: 10, ContextWindow: 8000}, 8000, 0, ""},
		{"default window", "m/plain", 0, 0, &model.Usage{InputTokens: 10}, catalog.DefaultContextWindow, 0, ""},
		{"no usage: the last window, cost unchanged", "m/plain", 0, 16000, nil, 16000, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent []session.Event
			m := &meter{
				ctl:    &controls{a: a, read: func() ctlState { return ctlState{model: tt.model, cost: tt.cost} }},
				emit:   func(_ context.Context, ev session.Event) { sent = append(sent, ev) },
				window: func() int { return tt.window },
			}
			ev := m.event(tt.u)
			if ev.Size != tt.wantSize || math.Abs(ev.Cost-tt.wantCost) > 1e-12 || ev.Currency != tt.currency {
				t.Errorf("event = %+v, want size %d cost %g %q", ev, tt.wantSize, tt.wantCost, tt.currency)
			}
			m.record(t.Context(), nil) // nothing reported: nothing logged
			if len(sent) != 0 {
				t.Errorf("record(nil) logged %v", sent)
			}
		})
	}

	m := &meter{ctl: &controls{a: a, read: func() ctlState { return ctlState{model: "m/plain"} }},
		emit: func(context.Context, session.Event) {}, window: func() int { return 0 }}
	if m.takeTurn() != nil {
		t.Fatal("a turn with no usage reports some")
	}
	m.record(t.Context(), &model.Usage{InputTokens: 100, OutputTokens: 20, CachedTokens: 30})
	m.record(t.Context(), &model.Usage{InputTokens: 500, OutputTokens: 9, Estimated: true}) // not a report
	m.record(t.Context(), &model.Usage{InputTokens: 150, OutputTokens: 5})
	u := m.takeTurn()
	if u == nil || u.InputTokens != 250 || u.OutputTokens != 25 || u.TotalTokens != 275 || u.CachedReadTokens == nil || *u.CachedReadTokens != 30 {
		t.Errorf("turn usage = %+v", u)
	}
	if m.takeTurn() != nil {
		t.Error("takeTurn did not start the count again")
	}
}

// The announcer sends the catalog after the reply that names the session,
// and holds a prompt until then; a session never announced holds nothing.
func TestAnnouncer(t *testing.T) {
	var sent []session.Event
	var mu sync.Mutex
	var reply func()
	n := &announcer{
		emit:  func(_ context.Context, ev session.Event) { mu.Lock(); sent = append(sent, ev); mu.Unlock() },
		after: func(_ context.Context, f func()) { reply = f },
	}
	n.wait(t.Context()) // nothing to wait for
	n.afterReply(t.Context())
	waited := make(chan struct{})
	go func() { n.wait(t.Context()); close(waited) }()
	select {
	case <-waited:
		t.Fatal("a prompt went ahead before the session was announced")
	case <-time.After(20 * time.Millisecond):
	}
	reply() // the response that names the session is out
	<-waited
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 {
		t.Fatalf("sent %d events, want the catalog once", len(sent))
	}
	if c, ok := sent[0].Payload.(session.Commands); !ok || len(c.Commands) != len(commands) {
		t.Errorf("sent %+v, want the command catalog", sent[0].Payload)
	}

	// A reply that never comes holds a prompt only as long as its context.
	held := &announcer{emit: func(context.Context, session.Event) {}, after: func(context.Context, func()) {}}
	held.afterReply(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	held.wait(ctx)
}
