package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

// BenchmarkParse10k reads and checks a 10,000-event log held in memory: the
// store's part of a session/load (the agent's benchmark adds the replay).
func BenchmarkParse10k(b *testing.B) {
	st, err := OpenStore(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	lg, err := st.Create(Header{ID: "big", Cwd: "/work/project"})
	if err != nil {
		b.Fatal(err)
	}
	result := strings.Repeat("12: \tfmt.Println(\"a line of a file the model read\")\n", 40)
	for i := 0; len(lg.Events()) < 10_000; i++ {
		for _, ev := range turn(i+1, fmt.Sprintf("question %d", i+1)) {
			if ev.Type() == TypeToolResult {
				ev = New(ToolResult{CallID: "c", Result: registry.Result{Content: []registry.Content{registry.Text(result)}}})
			}
			if len(lg.Events()) < 10_000 {
				lg.Append(ev)
			}
		}
	}
	lg.Close()
	data, err := os.ReadFile(filepath.Join(st.Dir(), "big.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		_, evs, _, _, err := Parse("big", data)
		if err != nil || len(evs) != 10_000 {
			b.Fatalf("%d events, %v", len(evs), err)
		}
	}
}
