//go:build unix

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// longTurns is how many prompt turns BenchmarkLongSession drives.
const longTurns = 500

// longModel answers each request by what it asks: a prompt gets a thought,
// text and two tool calls (read and grep), tool results get a closing
// answer, and anything else (automatic compaction's summary request) a
// short summary. A script in order would be thrown off by compaction's
// requests, which come when the context fills.
type longModel struct {
	requests, summaries int
}

func (m *longModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	m.requests++
	last := req.Messages[len(req.Messages)-1]
	var r model.ScriptResponse
	switch {
	case last.Role == model.RoleTool:
		r.Parts = []model.ScriptPart{{Text: fmt.Sprintf("Answer %d: main calls Hello once per name, and Hello prints a greeting for each.", m.requests)}}
	case last.Role == model.RoleUser && strings.HasPrefix(last.Content, "Question"):
		r.Parts = []model.ScriptPart{
			{Thought: fmt.Sprintf("Request %d: read the file and look for its callers before answering.", m.requests)},
			{Text: "Let me read main.go and search for Hello."},
			{ToolCall: &model.ScriptToolCall{ID: fmt.Sprintf("r%d_read", m.requests), Name: "read", Arguments: json.RawMessage(`{"file_path":"main.go"}`)}},
			{ToolCall: &model.ScriptToolCall{ID: fmt.Sprintf("r%d_grep", m.requests), Name: "grep", Arguments: json.RawMessage(`{"pattern":"Hello","include":"*.go"}`)}},
		}
	default:
		m.summaries++
		r.Parts = []model.ScriptPart{{Text: "Summary: the user asks what main.go does; it defines Hello0 to Hello59, each printing a greeting."}}
	}
	return (&model.Script{Responses: []model.ScriptResponse{r}}).Stream(ctx, req)
}

// allocated is the process's heap allocations so far, in objects and
// bytes, without the stop-the-world of runtime.ReadMemStats.
func allocated() (objects, bytes uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

func rssKiB() int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// BenchmarkLongSession drives one persisted session for 500 turns with a
// scripted model, each turn streaming a thought and text, running two
// tools (read, grep) and answering, every update encoded for the wire;
// automatic compaction runs when the context fills, as it would. It
// reports the bridge's CPU time per turn near turn 1, 100 and 500 (the
// median of the 10 turns ending there: one turn is too short to time
// alone), allocations and bytes allocated per turn at the same points,
// and the RSS, log size and compactions at the end. A turn should cost the
// same at 500 as at 1: the model request carries the history, but nothing
// should re-encode, re-translate or copy it.
//
//	go test ./agent -run '^$' -bench LongSession -benchtime 1x
func BenchmarkLongSession(b *testing.B) {
	cwd, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var src strings.Builder
	src.WriteString("package main\n\nimport \"fmt\"\n\n")
	for i := range 60 {
		fmt.Fprintf(&src, "// Hello%d greets name number %d.\nfunc Hello%d(name string) { fmt.Println(\"hello\", name) }\n\n", i, i, i)
	}
	if err := os.WriteFile(filepath.Join(cwd, "main.go"), []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	reg := registry.New()
	fs.Register(reg)
	var cpu, allocs, allocBytes []time.Duration // per turn; allocations stored as counts
	var rss, logBytes, summaries int
	for b.Loop() {
		st, err := session.OpenStore(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		c := &wireClient{encode: true}
		lm := &longModel{}
		a := New(c, Options{Registry: reg, Store: st, Model: lm})
		ctx := b.Context()
		if _, err := a.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
			b.Fatal(err)
		}
		sess, err := a.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd})
		if err != nil {
			b.Fatal(err)
		}
		cpu, allocs, allocBytes = cpu[:0], allocs[:0], allocBytes[:0]
		for t := range longTurns {
			req := &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("Question %d: what does main.go do?", t))}}
			a0, b0 := allocated()
			c0 := cpuTime()
			resp, err := a.Prompt(ctx, req)
			c1 := cpuTime()
			a1, b1 := allocated()
			if err != nil || resp.StopReason != "end_turn" {
				b.Fatalf("turn %d: %v %+v", t+1, err, resp)
			}
			cpu, allocs, allocBytes = append(cpu, c1-c0), append(allocs, time.Duration(a1-a0)), append(allocBytes, time.Duration(b1-b0))
		}
		if lm.requests < 2*longTurns {
			b.Fatalf("%d model requests in %d turns", lm.requests, longTurns)
		}
		summaries = lm.summaries
		runtime.GC()
		rss = rssKiB()
		if fi, err := os.Stat(filepath.Join(st.Dir(), sess.SessionID+".jsonl")); err == nil {
			logBytes = int(fi.Size())
		}
		a.Shutdown()
	}
	// The median of the 10 turns ending at turn n.
	at := func(xs []time.Duration, n int) float64 {
		w := slices.Clone(xs[n-min(n, 10) : n])
		slices.Sort(w)
		return float64(w[len(w)/2])
	}
	for _, n := range []int{1, 100, 500} {
		b.ReportMetric(at(cpu, n), fmt.Sprintf("ns/turn%d", n))
	}
	for _, n := range []int{1, 100, 500} {
		b.ReportMetric(at(allocs, n), fmt.Sprintf("allocs/turn%d", n))
	}
	for _, n := range []int{1, 100, 500} {
		b.ReportMetric(at(allocBytes, n), fmt.Sprintf("B/turn%d", n))
	}
	b.ReportMetric(at(cpu, 500)/at(cpu, 10), "turn500/turn10")
	b.ReportMetric(float64(rss)/1024, "MiB-RSS-end")
	b.ReportMetric(float64(logBytes)/(1<<20), "MiB-log")
	b.ReportMetric(float64(summaries), "compactions")
}
