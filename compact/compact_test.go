package compact

import (
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/model"
)

func user(s string) model.Message { return model.Message{Role: model.RoleUser, Content: s} }
func asst(s string, calls ...string) model.Message {
	m := model.Message{Role: model.RoleAssistant, Content: s}
	for _, c := range calls {
		m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: c, Name: "read", Arguments: []byte(`{}`)})
	}
	return m
}
func tool(id, s string) model.Message {
	return model.Message{Role: model.RoleTool, ToolCallID: id, Content: s}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		p           Policy
		limit, keep int
		over        int // a size that is over
	}{
		{Policy{Window: 1000}, 800, 200, 801},
		{Policy{Window: 1000, Threshold: 0.5}, 500, 200, 501},
		{Policy{Window: 1000, Threshold: 0.3}, 300, 150, 301}, // keep below the threshold
		{Policy{Window: 1000, Threshold: 7}, 800, 200, 801},   // nonsense: the default
	}
	for _, tt := range tests {
		if tt.p.Limit() != tt.limit || tt.p.Keep() != tt.keep || !tt.p.Over(tt.over) || tt.p.Over(tt.limit) {
			t.Errorf("%+v: limit %d keep %d; want %d %d", tt.p, tt.p.Limit(), tt.p.Keep(), tt.limit, tt.keep)
		}
	}
	if (Policy{}).Over(1 << 30) {
		t.Error("no window known: never over")
	}
}

func TestSplit(t *testing.T) {
	big := strings.Repeat("x", 4000) // ~1000 tokens
	hist := []model.Message{
		user("first"), asst("", "a"), tool("a", big), asst("done"), // turn 1
		user("second"), asst("", "b"), tool("b", "short"), asst("ok"), // turn 2: small
	}
	tests := []struct {
		name string
		msgs []model.Message
		keep int
		want int
	}{
		{"the small last turn fits", hist, 200, 4},
		{"everything fits: still whole turns, from the second", hist, 10000, 4},
		{"nothing fits: the last step alone", hist, 1, 7},
		{"a huge current turn: split at an assistant step", []model.Message{
			user("go"), asst("", "a"), tool("a", big), asst("", "b"), tool("b", big), asst("", "c"), tool("c", "s")}, 300, 5},
		{"never at a tool result", []model.Message{user("go"), asst("", "a"), tool("a", "x"), tool("b", big)}, 1, 1},
		{"one message: nothing to summarise", []model.Message{user("hi")}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.msgs, tt.keep)
			if got != tt.want {
				t.Fatalf("Split = %d, want %d", got, tt.want)
			}
			if got > 0 && tt.msgs[got].Role == model.RoleTool {
				t.Fatal("split at a tool result: its call would be summarised away")
			}
		})
	}
}

func TestPrune(t *testing.T) {
	big := strings.Repeat("é", 3000) // 6000 bytes
	hist := []model.Message{user("go"), asst("", "a"), tool("a", big), asst("", "b"), tool("b", big), asst("done")}
	got, n := Prune(hist, 3, 600)
	if n != 1 {
		t.Fatalf("shortened %d, want 1 (only before the split)", n)
	}
	if hist[2].Content != big {
		t.Fatal("Prune changed its input")
	}
	c := got[2].Content
	if !strings.HasPrefix(c, prunedMark) || len(c) > 600+300 || !strings.Contains(c, "6000 characters") || !strings.Contains(c, "[…]") {
		t.Fatalf("shortened result: %q", c)
	}
	if !strings.ContainsRune(c, 'é') || strings.ContainsRune(c, '\uFFFD') {
		t.Fatal("a character was cut in two")
	}
	if got[4].Content != big {
		t.Fatal("a recent result was shortened")
	}
	again, n := Prune(got, 3, 600)
	if n != 0 || again[2].Content != c {
		t.Fatal("pruning twice changed the result again")
	}
}

func TestReplaceAndRequest(t *testing.T) {
	h := Replace("S", []model.Message{user("next")})
	if len(h) != 3 || h[0].Content != SummaryPrefix+"S" || h[1].Content != Ack || h[2].Content != "next" {
		t.Fatalf("Replace: %+v", h)
	}
	h = Replace("S", []model.Message{asst("", "a"), tool("a", "r")})
	if len(h) != 3 || h[1].Role != model.RoleAssistant || h[1].Content != "" {
		t.Fatalf("Replace before an assistant step keeps turns alternating without the ack: %+v", h)
	}
	r := Request("SYS", []model.Message{user("a"), asst("b")}, "the API")
	if len(r.Messages) != 4 || r.Messages[0].Content != "SYS" || !strings.HasSuffix(r.Messages[3].Content, "Pay particular attention to: the API") {
		t.Fatalf("Request: %+v", r.Messages)
	}
	if len(r.Tools) != 0 {
		t.Fatal("a summary request offers no tools")
	}
}
