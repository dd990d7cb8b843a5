//go:build unix

package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"syscall"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/bash"
)

// countingClient is an editor that approves everything and counts the
// live terminal updates it receives, without keeping them.
type countingClient struct {
	mu            sync.Mutex
	outputUpdates int
	outputBytes   int
}

func (c *countingClient) SessionUpdate(_ context.Context, _ string, u acp.Update) error {
	if tu, ok := u.(acp.ToolCallUpdate); ok {
		if o, ok := tu.Meta["terminal_output"].(map[string]any); ok {
			c.mu.Lock()
			c.outputUpdates++
			c.outputBytes += len(o["data"].(string))
			c.mu.Unlock()
		}
	}
	return nil
}

func (c *countingClient) RequestPermission(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return &acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}, nil
}

func (c *countingClient) ReadTextFile(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: "no"}
}

func (c *countingClient) WriteTextFile(context.Context, *acp.WriteTextFileRequest) error {
	return &acp.Error{Code: acp.CodeMethodNotFound, Message: "no"}
}

// BenchmarkPromptBash1GiB runs a whole prompt turn whose one tool call is
// `yes | head -c 1GiB`: bash, the agent's live output events, the mapping,
// and a Zed-like client (terminal_output on). It reports how many live
// updates reached the client: whatever coalescing the agent does shows here.
//
//	go test ./agent -run '^$' -bench PromptBash -benchmem -benchtime 2x
func BenchmarkPromptBash1GiB(b *testing.B) {
	reg := registry.New()
	registry.MustAdd(reg, bash.Tool(&bash.Options{SpillDir: b.TempDir()}))
	b.SetBytes(1 << 30)
	var updates, liveBytes int
	for b.Loop() {
		script := `{"responses":[{"parts":[{"tool_call":{"name":"bash","arguments":{"command":"yes | head -c 1073741824"}}}]},{"parts":[{"text":"done"}]}]}`
		m, err := model.ParseScript([]byte(script))
		if err != nil {
			b.Fatal(err)
		}
		client := &countingClient{}
		a := agent.New(client, agent.Options{Registry: reg, Model: m})
		ctx := b.Context()
		if _, err := a.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: acp.ClientCapabilities{
			Meta: acp.Meta{"terminal_output": true}}}); err != nil {
			b.Fatal(err)
		}
		s, err := a.NewSession(ctx, &acp.NewSessionRequest{Cwd: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		prompt, _ := json.Marshal([]acp.ContentBlock{acp.TextBlock("go")})
		var blocks []acp.ContentBlock
		_ = json.Unmarshal(prompt, &blocks)
		if _, err := a.Prompt(ctx, &acp.PromptRequest{SessionID: s.SessionID, Prompt: blocks}); err != nil {
			b.Fatal(err)
		}
		a.Shutdown()
		// The coalescer bounds the live view (64 KiB per update, one update
		// per 50 ms): a flood reaches the editor as its latest output, the
		// rest is dropped with a note, and the model still gets its tail.
		if client.outputBytes == 0 || client.outputBytes > 1<<30 {
			b.Fatalf("client saw %d bytes of live output", client.outputBytes)
		}
		updates += client.outputUpdates
		liveBytes += client.outputBytes
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(updates)/float64(b.N), "updates/op")
	b.ReportMetric(float64(updates)/b.Elapsed().Seconds(), "updates/s")
	b.ReportMetric(float64(liveBytes)/float64(b.N)/(1<<20), "liveMiB/op")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peakRSS-MiB")
}
