//go:build unix

package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// wireClient encodes every update as the connection would and drops it, so
// a benchmark counts the cost of the wire form too.
type wireClient struct {
	stClient
	encode bool
	sent   int
}

func (c *wireClient) SessionUpdate(_ context.Context, id string, u acp.Update) error {
	c.sent++
	if !c.encode {
		return nil
	}
	b, err := acp.SessionNotification{SessionID: id, Update: u}.MarshalJSON() // as acp.Conn does
	if err != nil {
		return err
	}
	_, err = io.Discard.Write(b)
	return err
}

// benchLog writes a session of n events shaped like real use: each turn a
// prompt, streamed thought and text (word-sized chunks), a response with two
// reads whose results are about 2 KB of numbered source, and a closing answer.
func benchLog(b *testing.B, dir, cwd string, n int) {
	st, err := session.OpenStore(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	lg, err := st.Create(session.Header{ID: "big", Cwd: cwd})
	if err != nil {
		b.Fatal(err)
	}
	var src strings.Builder
	for i := range 40 {
		fmt.Fprintf(&src, "%d: \tfmt.Println(\"line %d of a file the model read\")\n", i+1, i+1)
	}
	result := "<path>" + cwd + "/main.go</path>\n<type>file</type>\n<content>\n" + src.String() + "\n(End of file - total 40 lines)\n</content>"
	var all, cur []session.Event
	add := func(ev session.Event) { cur = append(cur, ev) }
	words := strings.Fields("The function reads its arguments and greets each name in turn, falling back to the world when none is given.")
	for turn := 1; ; turn++ {
		cur = cur[:0]
		prompt := fmt.Sprintf("Question %d: what does main.go do?", turn)
		add(session.New(session.UserMessage{Prompt: json.RawMessage(`[{"type":"text","text":"` + prompt + `"}]`), Text: prompt}))
		add(session.New(session.TurnStart{Turn: turn}))
		for _, w := range words[:8] {
			add(session.New(session.AssistantChunk{Kind: "thought", Text: w + " "}))
		}
		var calls []session.MessageCall
		for k := range 2 {
			calls = append(calls, session.MessageCall{ID: fmt.Sprintf("c%d_%d", turn, k), Name: "read", Arguments: json.RawMessage(`{"file_path":"main.go"}`)})
		}
		add(session.New(session.AssistantMessage{Reasoning: strings.Join(words[:8], " "), ToolCalls: calls}))
		for _, c := range calls {
			add(session.New(session.ToolCall{CallID: c.ID, Name: c.Name, Args: json.RawMessage(c.Arguments)}))
			add(session.New(session.ToolStatus{CallID: c.ID, Status: "running"}))
			add(session.New(session.ToolResult{CallID: c.ID, Result: registry.Result{Content: []registry.Content{registry.Text(result)}}}))
		}
		for _, w := range words {
			add(session.New(session.AssistantChunk{Kind: "text", Text: w + " "}))
		}
		add(session.New(session.AssistantMessage{Text: strings.Join(words, " ")}))
		add(session.New(session.TurnEnd{Turn: turn, StopReason: "end_turn"}))
		if len(all)+len(cur) > n {
			break
		}
		all = append(all, cur...)
	}
	// Whole turns only (a cut turn would be sealed on load); notices fill up.
	for len(all) < n {
		all = append(all, session.New(session.Notice{Text: "Model request failed: rate limited; retrying."}))
	}
	for _, ev := range all {
		lg.Append(ev)
	}
	if err := lg.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoadReplay10k is session/load of a 10,000-event session in a
// fresh agent: read and check the log, rebuild the model's context, and
// replay every update through a fresh translator. The wire case also
// encodes each update as the connection would; the updates case stops at
// the updates, to show what the encoding adds.
func BenchmarkLoadReplay10k(b *testing.B) {
	dir, cwd := b.TempDir(), b.TempDir()
	benchLog(b, dir, cwd, 10_000)
	st, err := session.OpenStore(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := registry.New()
	fs.Register(reg)
	for _, encode := range []bool{true, false} {
		name := "updates"
		if encode {
			name = "wire"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			sent := 0
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				c := &wireClient{encode: encode}
				a := New(c, Options{Registry: reg, Store: st})
				if _, err := a.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
					b.Fatal(err)
				}
				if _, err := a.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: "big", Cwd: cwd}); err != nil {
					b.Fatal(err)
				}
				s, _ := a.session("big")
				if s.log.Len() != 10_000 || len(s.history()) == 0 {
					b.Fatalf("loaded %d events, %d messages", s.log.Len(), len(s.history()))
				}
				sent = c.sent
				a.Shutdown()
			}
			// The machine is shared: CPU time per load says what a load
			// costs whatever else runs, where ns/op also counts the wait
			// for a core.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(sent), "updates/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadReplay10kConn is the same load through the real connection:
// the request comes in as a JSON-RPC line, every update and the response go
// out as lines to a reader that drains them, as an editor's would.
func BenchmarkLoadReplay10kConn(b *testing.B) {
	dir, cwd := b.TempDir(), b.TempDir()
	benchLog(b, dir, cwd, 10_000)
	st, err := session.OpenStore(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := registry.New()
	fs.Register(reg)
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"big","cwd":%q,"mcpServers":[]}}`+"\n", cwd)
	lines := 0
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		var ag *Agent
		conn := acp.NewConn(context.Background(), func(c acp.Client) acp.Agent {
			ag = New(c, Options{Registry: reg, Store: st})
			return ag
		}, inR, outW, inR, nil)
		done := make(chan int)
		go func() {
			sc := bufio.NewScanner(outR)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			n := 0
			for sc.Scan() {
				n++
				if bytes.HasPrefix(sc.Bytes(), []byte(`{"id":1,`)) || bytes.Contains(sc.Bytes(), []byte(`"id":1,"result"`)) {
					break
				}
			}
			done <- n
			io.Copy(io.Discard, outR)
		}()
		if _, err := io.WriteString(inW, req); err != nil {
			b.Fatal(err)
		}
		lines = <-done
		inW.Close()
		conn.Wait()
		ag.Shutdown()
		outW.Close()
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(lines), "lines/op")
}
