package agent

import (
	"fmt"
	"testing"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/google/go-cmp/cmp"
)

// The request cache gives the system prompt and the history exactly, as
// the history grows, the prompt changes and the history is replaced, and a
// request already made keeps its messages.
func TestRequestCache(t *testing.T) {
	var c reqCache
	var history []model.Message
	var gen uint64
	var made [][]model.Message // each request's messages and what they must stay
	var want [][]model.Message
	sys := "system A"
	for i := range 40 {
		switch {
		case i == 15:
			sys = "system B" // a mode change
		case i == 25:
			history, gen = []model.Message{{Role: model.RoleUser, Content: "summary"}}, gen+1 // compaction
		}
		history = append(history, model.Message{Role: model.RoleUser, Content: fmt.Sprint("q", i)})
		if i%3 == 0 {
			history = append(history, model.Message{Role: model.RoleAssistant, Content: fmt.Sprint("a", i)})
		}
		got := c.messages(sys, history, gen)
		exp := append([]model.Message{{Role: model.RoleSystem, Content: sys}}, history...)
		if cmp.Diff(got, exp) != "" {
			t.Fatalf("request %d: %d messages, want %d", i, len(got), len(exp))
		}
		made, want = append(made, got), append(want, exp)
	}
	for i := range made {
		if cmp.Diff(made[i], want[i]) != "" {
			t.Errorf("request %d changed after later requests", i)
		}
	}
}
