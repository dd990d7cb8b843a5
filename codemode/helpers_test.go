package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

// jsonValues resolves a call to its text parsed as JSON when it is JSON,
// else to the text: tests see typed values without registry support.
type jsonValues struct{}

func (jsonValues) OutputSchema(*registry.Def) json.RawMessage { return nil }
func (jsonValues) Value(_ *registry.Def, r registry.Result) (json.RawMessage, error) {
	if t := r.Text(); json.Valid([]byte(t)) {
		return json.RawMessage(t), nil
	}
	return json.Marshal(r.Text())
}

// testHost runs sub-calls through a pipeline over a registry scope,
// without a session. OnStart and OnResult, when set, observe each sub-call
// (they stand in for the events an agent logs).
type testHost struct {
	Pipe     *pipeline.Pipeline
	Set      *registry.Scope
	OnStart  func(c *registry.Call)
	OnResult func(c *registry.Call, r registry.Result)
}

func (h *testHost) Tools() []*registry.Def           { return h.Set.Visible() }
func (h *testHost) Lookup(name string) *registry.Def { return h.Set.Get(name) }
func (h *testHost) Pipeline() *pipeline.Pipeline     { return h.Pipe }
func (h *testHost) Start(_ context.Context, _ *registry.Def, c *registry.Call) {
	if h.OnStart != nil {
		h.OnStart(c)
	}
}
func (h *testHost) Finish(_ context.Context, _ *registry.Def, c *registry.Call, r registry.Result) {
	if h.OnResult != nil {
		h.OnResult(c, r)
	}
}

// recorder is a Host over a registry that records what happened, in order.
type recorder struct {
	testHost
	mu     sync.Mutex
	events []string
	calls  []*registry.Call
}

func (h *recorder) add(s string) {
	h.mu.Lock()
	h.events = append(h.events, s)
	h.mu.Unlock()
}

func (h *recorder) log() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

func newRecorder(reg *registry.Registry) *recorder {
	h := &recorder{}
	h.testHost = testHost{Pipe: pipeline.New(nil), Set: reg.NewScope(),
		OnStart: func(c *registry.Call) {
			h.mu.Lock()
			h.calls = append(h.calls, c)
			h.mu.Unlock()
			h.add("start " + c.ID + " " + c.Name + " " + string(c.Args))
		},
		OnResult: func(c *registry.Call, r registry.Result) {
			h.add(fmt.Sprintf("end %s %s error=%v", c.ID, c.Name, r.IsError))
		},
	}
	return h
}

type echoArgs struct {
	V any `json:"v,omitempty"`
}

// testRegistry holds tools for the runtime tests:
//   - echo: returns its v argument (safe);
//   - my-tool and __proto__: exotic names;
//   - block: waits for cancellation, then fails (safe);
//   - boom: panics;
//   - fail: fails with a message;
//   - sleep: sleeps v milliseconds and returns v; safe when v < 1000 (so
//     the tests pick exclusive calls with v >= 1000 and take v-1000 ms).
func testRegistry(t testing.TB) *registry.Registry {
	reg := registry.New()
	echo := func(_ context.Context, _ *registry.Call, in echoArgs) (string, error) {
		b, err := json.Marshal(in.V)
		return string(b), err
	}
	safe := func(echoArgs) bool { return true }
	registry.MustAdd(reg, registry.Tool[echoArgs, string]{Name: "echo", Description: "Echo v back.", Run: echo, ConcurrencySafe: safe})
	registry.MustAdd(reg, registry.Tool[echoArgs, string]{Name: "my-tool", Run: echo})
	registry.MustAdd(reg, registry.Tool[echoArgs, string]{Name: "__proto__", Run: echo})
	registry.MustAdd(reg, registry.Tool[echoArgs, string]{Name: "block", ConcurrencySafe: safe,
		Run: func(ctx context.Context, _ *registry.Call, _ echoArgs) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}})
	registry.MustAdd(reg, registry.Tool[echoArgs, string]{Name: "boom",
		Run: func(context.Context, *registry.Call, echoArgs) (string, error) { panic("kaboom") }})
	registry.MustAdd(reg, registry.Tool[echoArgs, string]{Name: "fail",
		Run: func(context.Context, *registry.Call, echoArgs) (string, error) {
			return "", registry.Errorf("NOPE", "the file does not exist")
		}})
	registry.MustAdd(reg, registry.Tool[struct {
		V int `json:"v"`
	}, int]{Name: "sleep",
		ConcurrencySafe: func(in struct {
			V int `json:"v"`
		}) bool {
			return in.V < 1000
		},
		Run: func(ctx context.Context, _ *registry.Call, in struct {
			V int `json:"v"`
		}) (int, error) {
			select {
			case <-time.After(time.Duration(in.V%1000) * time.Millisecond):
			case <-ctx.Done():
				return 0, ctx.Err()
			}
			return in.V, nil
		}})
	return reg
}

//lint:ignore ST1008 the recorder is a test extra after the usual (value, error) pair
func runCode(t *testing.T, limits Limits, code string) (Output, error, *recorder) {
	t.Helper()
	h := newRecorder(testRegistry(t))
	r := NewRunner(&Options{Limits: limits, Values: jsonValues{}})
	out, err := r.Run(t.Context(), &registry.Call{ID: "call_1", Name: ToolName}, code, h)
	return out, err, h
}
