package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkStdioToolCalls: end-to-end tool calls per second over real
// stdio with the scripted model. Each op is one prompt turn in which the
// model calls read 100 times (one parallel group), gets the results, and
// answers; the bridge persists the session as it would for an editor.
func BenchmarkStdioToolCalls(b *testing.B) {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	const calls = 100
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strings.Repeat("a line of text\n", 40)), 0o644)
	var resp []string
	for range b.N {
		var parts []string
		for j := range calls {
			parts = append(parts, fmt.Sprintf(`{"tool_call":{"name":"read","arguments":{"file_path":"f.txt","offset":%d,"limit":5}}}`, j%30+1))
		}
		resp = append(resp, `{"parts":[`+strings.Join(parts, ",")+`]}`, `{"parts":[{"text":"done"}]}`)
	}
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"responses":[`+strings.Join(resp, ",")+`]}`), 0o644)

	cmd := exec.Command(bins["acp-bridge"], "--model", "script:"+script, "--log-level", "error", "--state-dir", filepath.Join(dir, "state"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReaderSize(stdout, 1<<20)
	untilID := func(id string) (updates int) {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Error  json.RawMessage `json:"error"`
			}
			json.Unmarshal(line, &m)
			if m.Method == "session/update" {
				updates++
			}
			if m.Method == "" && string(m.ID) == id {
				if len(m.Error) > 0 {
					b.Fatalf("error: %s", line)
				}
				return updates
			}
		}
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"terminal_output":true}}}}`+"\n")
	untilID(`"i"`)
	io.WriteString(stdin, fmt.Sprintf(`{"jsonrpc":"2.0","id":"n","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", dir))
	line, _ := r.ReadBytes('\n')
	var created struct {
		Result struct{ SessionID string } `json:"result"`
	}
	json.Unmarshal(line, &created)
	b.ResetTimer()
	start := time.Now()
	updates := 0
	for i := range b.N {
		id := fmt.Sprintf(`"p%d"`, i)
		io.WriteString(stdin, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`+"\n", id, created.Result.SessionID))
		updates += untilID(id)
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(calls*b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(updates)/float64(b.N), "updates/op")
}
