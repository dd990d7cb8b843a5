package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// cacheView is a request as a prefix cache sees it: the tools, then the
// messages in order (providers render the tool list into the prompt ahead
// of the conversation).
func cacheView(r *chatRequest) []byte {
	var b bytes.Buffer
	b.Write(r.Tools)
	for _, m := range r.Messages {
		b.Write(m)
	}
	return b.Bytes()
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// cacheHitShare is the share of the bytes sent, over every request after the
// first, that repeat the start of the request before it: what a prefix
// cache serves from memory when nothing else evicts it. unplanned counts
// the requests that do not continue the one before, leaving out the planned
// breaks: a summary request (it ends early, with the instruction) and the
// request that starts from its summary.
func cacheHitShare(reqs []*chatRequest) (share float64, unplanned int) {
	var hit, total int
	for i := 1; i < len(reqs); i++ {
		prev, cur := cacheView(reqs[i-1]), cacheView(reqs[i])
		p := commonPrefix(prev, cur)
		if p < len(prev) && !isSummaryRequest(reqs[i]) && !isSummaryRequest(reqs[i-1]) {
			unplanned++
		}
		hit += p
		total += len(cur)
	}
	return float64(hit) / float64(total), unplanned
}

// cacheSession drives a scripted session of turns prompts, each answered
// with a read of a file and then a short text, against the recorded
// endpoint, with a context window of window tokens (0: the default), and
// returns the requests.
func cacheSession(t *testing.T, turns, window int) []*chatRequest {
	dir := t.TempDir()
	for i := range 8 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%d.go", i)), strings.Repeat(fmt.Sprintf("// line of file %d\n", i), 200))
	}
	reg := registry.New()
	fs.Register(reg)
	ep := newEndpoint(t, func(n int, req *chatRequest) reply {
		last := req.message(len(req.Messages) - 1)
		if last.Role == "user" && !strings.HasPrefix(last.Content, "Summarise") {
			args, _ := json.Marshal(map[string]string{"file_path": fmt.Sprintf("f%d.go", n%8)})
			return reply{calls: []model.ToolCall{{ID: fmt.Sprintf("c%d", n), Name: "read", Arguments: args}}, complete: 20}
		}
		return reply{text: fmt.Sprintf("Here is what I found in step %d.", n), complete: 20}
	})
	e := newEditor(t, Options{Models: []ModelChoice{{ID: "m", Provider: ep.provider(window), ContextWindow: window}},
		Registry: reg, UserInstructionsDir: "-"})
	sid := e.newSession(dir)
	for i := range turns {
		if _, err := e.prompt(sid, fmt.Sprintf("Question %d: what does f%d.go hold?", i, i%8)); err != nil {
			t.Fatal(err)
		}
	}
	return ep.requests()
}

// TestCacheHitShare50Turns measures the figure BENCHMARKS.md reports: the
// share of each request that stays a prefix-cache hit across a 50-turn
// session (100 requests and more), with a window that never fills and with
// one small enough that the session compacts itself several times (the
// planned breaks). Run with -v to see the figures.
func TestCacheHitShare50Turns(t *testing.T) {
	tests := []struct {
		name     string
		window   int
		minShare float64
	}{
		{"default window", 0, 0.95},
		{"8000-token window", 8000, 0.80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := cacheSession(t, 50, tt.window)
			share, unplanned := cacheHitShare(reqs)
			summaries := 0
			for _, r := range reqs {
				if isSummaryRequest(r) {
					summaries++
				}
			}
			t.Logf("50 turns, %d requests, %s: %.2f%% of the bytes sent are a cached prefix; %d compactions; %d unplanned breaks",
				len(reqs), tt.name, 100*share, summaries, unplanned)
			if unplanned != 0 {
				t.Errorf("%d requests do not continue the one before", unplanned)
			}
			if tt.window > 0 && summaries == 0 {
				t.Error("the small window never filled: the test measures nothing different")
			}
			if share < tt.minShare {
				t.Errorf("cache hit share %.3f, want at least %.2f", share, tt.minShare)
			}
		})
	}
}
