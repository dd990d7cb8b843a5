package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

type pathArgs struct {
	Path string `json:"path"`
}

// A gate denies, a post-execute hook adds context, and every failure is a
// result the model reads, never an error.
func ExamplePipeline_Execute() {
	r := registry.New()
	registry.MustAdd(r, registry.Tool[pathArgs, string]{
		Name: "read",
		Run: func(_ context.Context, _ *registry.Call, in pathArgs) (string, error) {
			return "contents of " + in.Path, nil
		},
	})
	p := pipeline.New(&pipeline.Options{
		Gates: []pipeline.Gate{func(_ context.Context, _ *registry.Def, c *registry.Call) pipeline.Decision {
			if strings.Contains(string(c.Args), ".env") {
				return pipeline.Decision{Kind: pipeline.Deny, Reason: "secrets stay unread in this session"}
			}
			return pipeline.Decision{Kind: pipeline.Allow}
		}},
		PostExecute: []pipeline.PostHook{func(_ context.Context, _ *registry.Def, _ *registry.Call, res registry.Result) pipeline.PostDecision {
			if res.IsError {
				return pipeline.PostDecision{Kind: pipeline.Accept}
			}
			return pipeline.PostDecision{Kind: pipeline.Accept, Context: []string{"the file may have changed since"}}
		}},
	})
	d := r.Get("read", nil)
	for _, args := range []string{`{"path":"main.go"}`, `{"path":".env"}`, `{"file":"x"}`} {
		res := p.Execute(context.Background(), d, &registry.Call{ID: "1", Name: "read", Args: json.RawMessage(args)})
		code := res.Code
		if code == "" {
			code = "OK"
		}
		fmt.Printf("%s %q %v\n", code, res.Text(), res.Context)
	}
	// Output:
	// OK "contents of main.go" [the file may have changed since]
	// DENIED "Error: secrets stay unread in this session" []
	// INVALID_ARGS "Error: invalid arguments: missing required property \"path\"" []
}

// Consecutive concurrency-safe calls run together; Done still reports them
// in model order, and a call that is not safe waits for the group.
func ExamplePipeline_ExecuteBatch() {
	r := registry.New()
	registry.MustAdd(r, registry.Tool[pathArgs, string]{
		Name:            "read",
		Run:             func(_ context.Context, _ *registry.Call, in pathArgs) (string, error) { return "read " + in.Path, nil },
		ConcurrencySafe: func(pathArgs) bool { return true },
	})
	registry.MustAdd(r, registry.Tool[pathArgs, string]{
		Name: "write",
		Run:  func(_ context.Context, _ *registry.Call, in pathArgs) (string, error) { return "wrote " + in.Path, nil },
	})
	var calls []*registry.Call
	for i, c := range []string{"read a", "read b", "write c", "read d"} {
		name, path, _ := strings.Cut(c, " ")
		calls = append(calls, &registry.Call{ID: fmt.Sprint(i), Name: name, Args: json.RawMessage(`{"path":"` + path + `"}`)})
	}
	pipeline.New(nil).ExecuteBatch(context.Background(), r.NewScope(), calls, pipeline.Hooks{
		Logged: func(i int, c *registry.Call) { fmt.Println("card", i, c.Name) },
		Done:   func(i int, _ *registry.Call, res registry.Result) { fmt.Println("result", i, res.Text()) },
	})
	// Output:
	// card 0 read
	// card 1 read
	// result 0 read a
	// result 1 read b
	// card 2 write
	// result 2 wrote c
	// card 3 read
	// result 3 read d
}
