package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/internal/staletmp"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// TestMain lets the test binary act as acp-bridge itself, so tests can run
// the real program over real stdio without a separate build.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		// doctor, run in this process, proves the sandbox through it.
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	if os.Getenv("ACP_BRIDGE_AS_MAIN") == "1" {
		main()
		return
	}
	if s := sandbox.Probe(); !s.Available {
		// Honestly degraded: where the kernel cannot confine commands, the
		// bridges these tests start run them unconfined, by choice (the
		// sandbox's own tests skip, saying why).
		fmt.Fprintf(os.Stderr, "no sandbox on this machine (%s): the tests run the bridge with ACP_BRIDGE_SANDBOX=off\n", s.Reason)
		os.Setenv("ACP_BRIDGE_SANDBOX", "off")
		offForKernel = true
	}
	staletmp.Sweep(os.TempDir(), time.Now(), "acp-bridge-e2e-*", "acp-bridge-startup-*")
	code := m.Run()
	if buildPath != "" {
		// The binary bridgeBinary built: about 30 MB a run, which would
		// otherwise pile up in the temp dir run after run.
		os.RemoveAll(filepath.Dir(buildPath))
	}
	if startupDir != "" {
		os.RemoveAll(startupDir)
	}
	os.Exit(code)
}

// offForKernel: TestMain chose sandbox off because this kernel cannot
// confine commands; every bridge the tests start then says so once.
var offForKernel bool

// withoutOffNote is s without what a bridge says once when its sandbox is
// off (the start line on stderr, cmd/acp-bridge/sandbox.go, and its log
// record; the thread's notice, agent/sandbox.go), where TestMain chose off
// for this kernel: the tests of quiet output and of a thread's exact text
// are not about the sandbox. Elsewhere s is as it is.
func withoutOffNote(s string) string {
	if !offForKernel {
		return s
	}
	s = offNotice.ReplaceAllString(s, "")
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.Contains(l, "sandbox off: the commands the agent runs are not confined") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// offNotice is the thread's notice, as agent text (a client without
// notices), with the blank lines around it.
var offNotice = regexp.MustCompile(`\n*\*Commands are not sandboxed\.[^*]*\*\n*`)

// sandboxEnv is what a bridge these tests start in an environment of its
// own must still be told about the sandbox: the mode TestMain chose where
// the kernel cannot confine, and the simulation of such a kernel
// (ACP_BRIDGE_SANDBOX_PROBE=none, sandbox.go), so a run that simulates it
// simulates it in every bridge it starts.
func sandboxEnv() []string {
	return []string{"ACP_BRIDGE_SANDBOX=" + os.Getenv("ACP_BRIDGE_SANDBOX"), probeEnv + "=" + os.Getenv(probeEnv)}
}

// bridge starts the program as a child process speaking on its stdio.
type bridge struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *syncBuffer
	wait   time.Duration // how long next waits for a line
}

// syncBuffer is a bytes.Buffer safe for the child's stderr copier and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startBridge(t *testing.T, args ...string) *bridge {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ACP_BRIDGE_AS_MAIN=1", "ACP_BRIDGE_STATE_DIR="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &bridge{t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 1024), stderr: &syncBuffer{}, wait: 10 * time.Second}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			b.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(b.lines)
	}()
	t.Cleanup(func() {
		b.stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Errorf("bridge did not exit within 5s of stdin closing")
		}
	})
	return b
}

func (b *bridge) send(line string) {
	b.t.Helper()
	if _, err := io.WriteString(b.stdin, line+"\n"); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bridge) next() []byte {
	b.t.Helper()
	select {
	case l, ok := <-b.lines:
		if !ok {
			b.t.Fatalf("stdout closed; stderr:\n%s", b.stderr)
		}
		return l
	case <-time.After(b.wait):
		b.t.Fatalf("no output within %v; stderr:\n%s", b.wait, b.stderr)
	}
	return nil
}

// response skips notifications until the response with the given id.
func (b *bridge) response(id string) []byte {
	b.t.Helper()
	for {
		line := b.next()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == id {
			return line
		}
	}
}

// Over real stdio, with hostile lines mixed in, every stdout line is one
// valid JSON-RPC message of the ACP schema, every turn's updates precede its
// response, and the process keeps serving.
func TestRealProcessStdoutIsOnlyJSONRPC(t *testing.T) {
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	scriptPath := filepath.Join(dir, "script.json")
	os.WriteFile(scriptPath, []byte(`{"responses":[
		{"parts":[{"thought":"hm"},{"text":"Reading a.txt."},{"tool_call":{"name":"read","arguments":{"file_path":"a.txt"}}}]},
		{"parts":[{"text":"It has two lines."}]},
		{"parts":[{"text":"slow"},{"delay_ms":20000}]}
	]}`), 0o644)
	b := startBridge(t, "--model", "script:"+scriptPath, "--log-level", "debug")
	check := acpschema.NewChecker(schema)
	send := func(line string) {
		b.t.Helper()
		if json.Valid([]byte(line)) {
			if err := check.Check(acpschema.ToAgent, []byte(line)); err != nil {
				t.Logf("(deliberately invalid input) %v", err)
			}
		}
		b.send(line)
	}
	// recvUntil reads messages until the response with the given id,
	// validating each, and returns them.
	recvUntil := func(id string) []map[string]json.RawMessage {
		t.Helper()
		var got []map[string]json.RawMessage
		for {
			line := b.next()
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("stdout line is not JSON: %q", line)
			}
			if err := check.Check(acpschema.FromAgent, line); err != nil {
				t.Errorf("schema: %v\n%s", err, line)
			}
			got = append(got, m)
			if _, isResp := m["method"]; !isResp && string(m["id"]) == id {
				return got
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"terminal_output":true}}}}`)
	recvUntil("1")
	send(`this is not json`)
	send(`{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`)
	send(`{"jsonrpc":"2.0","method":"no/such/notification"}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}}`)
	for _, id := range []string{"2", "3"} {
		msgs := recvUntil(id)
		last := msgs[len(msgs)-1]
		if _, ok := last["error"]; !ok {
			t.Errorf("id %s: want an error, got %s", id, last["result"])
		}
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	msgs := recvUntil("4")
	var sess struct{ SessionID string }
	json.Unmarshal(msgs[len(msgs)-1]["result"], &sess)

	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"what is in a.txt?"}]}}`, sess.SessionID))
	msgs = recvUntil("5")
	var kinds []string
	for _, m := range msgs[:len(msgs)-1] {
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		}
		json.Unmarshal(m["params"], &p)
		kinds = append(kinds, p.Update.SessionUpdate)
	}
	if !strings.Contains(strings.Join(kinds, ","), "tool_call,tool_call_update,tool_call_update") {
		t.Errorf("turn updates: %v", kinds)
	}
	if string(msgs[len(msgs)-1]["result"]) != `{"stopReason":"end_turn"}` {
		t.Errorf("prompt result: %s", msgs[len(msgs)-1]["result"])
	}

	// A slow turn, cancelled: it answers cancelled and nothing of it follows.
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"slow"}]}}`, sess.SessionID))
	first := b.next() // the "slow" chunk: the turn is running
	if err := check.Check(acpschema.FromAgent, first); err != nil {
		t.Error(err)
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sess.SessionID))
	msgs = recvUntil("6")
	if string(msgs[len(msgs)-1]["result"]) != `{"stopReason":"cancelled"}` {
		t.Errorf("cancelled prompt result: %s", msgs[len(msgs)-1]["result"])
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`)
	msgs = recvUntil("7")
	if len(msgs) != 1 {
		t.Errorf("messages after the cancelled turn's response: %d", len(msgs)-1)
	}
	b.stdin.Close()
	for l := range b.lines {
		t.Errorf("output after stdin closed: %s", l)
	}
}

func TestVersionAndHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "acp-bridge ") {
		t.Errorf("--version: code %d, out %q", code, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"--help"}, nil, &out, &errb); code != 0 || errb.Len() != 0 || !strings.Contains(out.String(), "-model string") {
		t.Errorf("--help: code %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if code := run(context.Background(), []string{"--no-such-flag"}, nil, &out, &errb); code != 2 {
		t.Errorf("bad flag: code %d", code)
	}
	if code := run(context.Background(), []string{"--model", "script:/does/not/exist"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Errorf("missing script: code %d", code)
	}
}

func TestDemoRuns(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"demo"}, nil, &out, &errb); code != 0 {
		t.Fatalf("demo exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{
		"tool call_1: Read main.go [read, pending]",
		"tool call_1 completed: Read main.go",
		"1: package main",
		"tool call_3 failed",
		"tool call_4: Edit NOTES.md [edit, pending]",
		`permission asked for "Edit NOTES.md"`,
		"│ checking 3",
		"tool call_5 completed",
		`turn ended: stopReason "end_turn"`,
		`turn ended: stopReason "cancelled"`,
		"│     - Keep it dependency-free.",                    // a context line of the diff
		"│   + - main.go greets each argument, or the world.", // the added line, marked
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	for _, bad := range []string{"map[", "&{", "<nil>"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("demo output prints a Go value (%q):\n%s", bad, out.String())
		}
	}
}

func TestUnifiedLines(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{"a\nb\nc\n", "a\nB\nc\n", "  a\n- b\n+ B\n  c"},
		{"", "x\n", "+ x"},
		{"1\n2\n3\n4\n5\n", "1\n2\n3\n4\nfive\n", "  …\n  4\n- 5\n+ five"},
	} {
		if got := unifiedLines(tc.old, tc.new); got != tc.want {
			t.Errorf("unifiedLines(%q, %q) =\n%s\nwant\n%s", tc.old, tc.new, got, tc.want)
		}
	}
}
