package agent

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/profiles"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/bash"
	"github.com/acp-bridge/acp-bridge/tools/fs"
	"github.com/acp-bridge/acp-bridge/tools/todo"
)

// instant answers every request at once, so a run measures only the
// bridge's own work.
type instant struct{}

func (instant) Stream(context.Context, *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		yield(model.Event{Kind: model.EventText, Text: "done"}, nil)
	}
}

// BenchmarkSubagentStart measures what starting a subagent costs the bridge
// itself, from the task call's profile to the subagent's answer with a
// model that answers at once: its scope (the profile's restrictions over
// the built-in tools), its system prompt, its one model request with the
// tools offered, the answer.
//
//	go test ./agent -run '^$' -bench BenchmarkSubagentStart -benchmem
func BenchmarkSubagentStart(b *testing.B) {
	reg := registry.New()
	fs.Register(reg)
	registry.MustAdd(reg, bash.Tool(nil))
	todo.Register(reg)
	ag := New(nopClient{}, Options{Registry: reg, Model: instant{}, UserInstructionsDir: "-", UserProfilesDir: "-"})
	defer ag.Shutdown()
	res, err := ag.NewSession(b.Context(), &acp.NewSessionRequest{Cwd: b.TempDir(), McpServers: []acp.McpServer{}})
	if err != nil {
		b.Fatal(err)
	}
	s, err := ag.session(res.SessionID)
	if err != nil {
		b.Fatal(err)
	}
	set, _ := profiles.Load(nil)
	for _, name := range []string{"explorer", "general"} {
		b.Run(name, func(b *testing.B) {
			p, _ := set.Get(name)
			// The first subagent takes the session's system prompt (once
			// per session, logged): not what each start costs.
			if _, err := s.subs.Launch(b.Context(), &registry.Call{ID: "warm-" + name}, p, "look", nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				out, err := s.subs.Launch(b.Context(), &registry.Call{ID: fmt.Sprintf("%s%d", name, i)}, p, "look", nil)
				if err != nil || out != "done" {
					b.Fatal(out, err)
				}
			}
		})
	}
}
