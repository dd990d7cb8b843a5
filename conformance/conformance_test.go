package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/internal/staletmp"
)

// builtDir is where buildBridge put the binary; TestMain removes it, so a
// run leaves no binary in $TMPDIR.
var builtDir string

func TestMain(m *testing.M) {
	staletmp.Sweep(os.TempDir(), time.Now(), "acp-bridge-conformance-*")
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// buildBridge builds cmd/acp-bridge into a temp dir once per test binary.
var buildBridge = sync.OnceValues(func() (string, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", err
	}
	dir, err := staletmp.MkdirTemp("acp-bridge-conformance-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	bin := filepath.Join(dir, "acp-bridge")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/acp-bridge")
	cmd.Dir = strings.TrimSpace(string(root))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// wire records and validates every line in both directions.
type wire struct {
	t     *testing.T
	check *acpschema.Checker
	mu    sync.Mutex
	lines []string // "→ " to the agent, "← " from it
}

func (w *wire) see(dir acpschema.Direction, line []byte) {
	w.mu.Lock()
	arrow := "→ "
	if dir == acpschema.FromAgent {
		arrow = "← "
	}
	w.lines = append(w.lines, arrow+string(line))
	w.mu.Unlock()
	if err := w.check.Check(dir, line); err != nil {
		w.t.Errorf("%v\n  %s", err, line)
	}
}

// lineTee validates each complete line written through it, then forwards it.
type lineTee struct {
	w   io.Writer
	buf []byte
	fn  func([]byte)
}

func (l *lineTee) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.fn(bytes.TrimRight(l.buf[:i], "\r"))
		l.buf = l.buf[i+1:]
	}
	return l.w.Write(p)
}

// recorder is the editor side: an acp-go-sdk Client that records updates
// and fails the test if the agent calls a method the client did not advertise.
type recorder struct {
	t       *testing.T
	mu      sync.Mutex
	updates []sdk.SessionUpdate
}

func (r *recorder) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: p.Options[0].OptionId}}}, nil
}
func (r *recorder) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	r.mu.Lock()
	r.updates = append(r.updates, n.Update)
	r.mu.Unlock()
	return nil
}
func (r *recorder) unadvertised(method string) error {
	r.t.Errorf("the agent called %s, which the client did not advertise", method)
	return errors.New("not supported")
}
func (r *recorder) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, r.unadvertised("fs/read_text_file")
}
func (r *recorder) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, r.unadvertised("fs/write_text_file")
}
func (r *recorder) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, r.unadvertised("terminal/create")
}
func (r *recorder) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, r.unadvertised("terminal/kill")
}
func (r *recorder) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, r.unadvertised("terminal/output")
}
func (r *recorder) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, r.unadvertised("terminal/release")
}
func (r *recorder) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, r.unadvertised("terminal/wait_for_exit")
}

func (r *recorder) snapshot() []sdk.SessionUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sdk.SessionUpdate(nil), r.updates...)
}

// TestIndependentClient drives the real binary with acp-go-sdk, an ACP
// client written by another team, through initialize, session/new, a
// prompt with a tool call, and the cancel of a second prompt, validating
// every message in both directions against the official schema.
func TestIndependentClient(t *testing.T) {
	bin, err := buildBridge()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"responses":[
		{"parts":[{"thought":"Read it first."},{"text":"Reading main.go."},{"tool_call":{"name":"read","arguments":{"file_path":"main.go","offset":1,"limit":2}}}]},
		{"parts":[{"text":"It declares package main."}]},
		{"parts":[{"text":"Working"},{"delay_ms":30000},{"text":" on it."}]}
	]}`), 0o644)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--model", "script:"+script, "--log-level", "debug")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "ACP_BRIDGE_STATE_DIR="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &wire{t: t, check: acpschema.NewChecker(schema)}
	// Every stdout line must be one JSON-RPC message; validate, then hand it to the SDK.
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			w.see(acpschema.FromAgent, sc.Bytes())
			pw.Write(append(sc.Bytes(), '\n'))
		}
		pw.Close()
	}()
	rec := &recorder{t: t}
	conn := sdk.NewClientSideConnection(rec, &lineTee{w: stdin, fn: func(l []byte) { w.see(acpschema.ToAgent, l) }}, pr)

	init, err := conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion:    sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: false, WriteTextFile: false}, Terminal: false},
		ClientInfo:         &sdk.Implementation{Name: "conformance", Version: "1"},
	})
	if err != nil {
		t.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	if init.ProtocolVersion != 1 || init.AgentInfo == nil || init.AgentInfo.Name == "" {
		t.Errorf("initialize: %+v", init)
	}
	if _, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "relative/path", McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("session/new with a relative cwd succeeded")
	} else {
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("relative cwd: %v, want -32602", err)
		}
	}
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: work, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("What is main.go?")}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", resp, err)
	}
	var call *sdk.SessionUpdateToolCall
	var done *sdk.SessionToolCallUpdate
	for _, u := range rec.snapshot() {
		if u.ToolCall != nil {
			call = u.ToolCall
		}
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted {
			done = u.ToolCallUpdate
		}
	}
	if call == nil || call.Kind != sdk.ToolKindRead || call.Title != "Read main.go (1 - 2)" ||
		len(call.Locations) != 1 || call.Locations[0].Path != filepath.Join(work, "main.go") {
		t.Errorf("tool_call: %+v", call)
	}
	if done == nil || done.ToolCallId != call.ToolCallId {
		t.Errorf("no completed update for the tool call: %+v", done)
	}

	// A second prompt, cancelled while the model streams: exactly one
	// answer, "cancelled", and no update of that turn after it.
	before := len(rec.snapshot())
	result := make(chan sdk.PromptResponse, 1)
	go func() {
		r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Go on.")}})
		if err != nil {
			t.Errorf("cancelled prompt answered an error: %v", err)
		}
		result <- r
	}()
	for len(rec.snapshot()) == before {
		time.Sleep(5 * time.Millisecond)
	}
	if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-result:
		if r.StopReason != sdk.StopReasonCancelled {
			t.Errorf("stopReason %q, want cancelled", r.StopReason)
		}
	case <-ctx.Done():
		t.Fatal("cancelled prompt never answered")
	}
	after := len(rec.snapshot())
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("bridge exit: %v\n%s", err, stderr.String())
	}
	if n := len(rec.snapshot()); n != after {
		t.Errorf("%d updates arrived after the cancelled prompt's response", n-after)
	}
	if t.Failed() {
		t.Logf("wire:\n%s", strings.Join(w.lines, "\n"))
	}
}
