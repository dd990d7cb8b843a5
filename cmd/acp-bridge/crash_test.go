//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// sdkClient is an editor written against the independent ACP SDK: it
// records every session/update it is sent.
type sdkClient struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	changed chan struct{}
}

func newSDKClient() *sdkClient { return &sdkClient{changed: make(chan struct{}, 1)} }

func (c *sdkClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

func (c *sdkClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
}

var errNoClientFS = errors.New("this client offers no file system or terminals")

func (c *sdkClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNoClientFS
}

func (c *sdkClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNoClientFS
}

func (c *sdkClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNoClientFS
}

func (c *sdkClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNoClientFS
}

func (c *sdkClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNoClientFS
}

func (c *sdkClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNoClientFS
}

func (c *sdkClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNoClientFS
}

// wire is the JSON of each update, for comparing what two processes sent.
func (c *sdkClient) wire(t *testing.T) []string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.updates))
	for _, n := range c.updates {
		if n.Update.AvailableCommandsUpdate != nil {
			continue // the agent's current offer, sent after new and load alike: not history
		}
		b, err := json.Marshal(n.Update)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// waitFor blocks until some update satisfies ok.
func (c *sdkClient) waitFor(t *testing.T, what string, ok func(sdk.SessionUpdate) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		found := slices.ContainsFunc(c.updates, func(n sdk.SessionNotification) bool { return ok(n.Update) })
		c.mu.Unlock()
		if found {
			return
		}
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// crashBridge is one acp-bridge process driven by the SDK client.
type crashBridge struct {
	cmd    *exec.Cmd
	conn   *sdk.ClientSideConnection
	client *sdkClient
	stdin  io.WriteCloser
	stderr strings.Builder
}

func startCrashBridge(t *testing.T, bin string, args ...string) *crashBridge {
	t.Helper()
	b := &crashBridge{client: newSDKClient()}
	b.cmd = exec.Command(bin, args...)
	b.cmd.Stderr = &b.stderr
	var err error
	if b.stdin, err = b.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b.cmd.ProcessState == nil {
			b.cmd.Process.Kill()
			b.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", b.stderr.String())
		}
	})
	b.conn = sdk.NewClientSideConnection(b.client, b.stdin, stdout)
	b.conn.SetLogger(slog.New(slog.DiscardHandler))
	return b
}

func buildCrashBridge(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "acp-bridge")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func writeScript(t *testing.T, dir, name string, responses ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(`{"responses":[`+strings.Join(responses, ",")+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// statuses is the last status the client was shown for each of the
// calls ids.
func (c *sdkClient) statuses(ids ...string) map[string]sdk.ToolCallStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]sdk.ToolCallStatus{}
	for _, n := range c.updates {
		for _, id := range ids {
			if st, ok := toolStatus(n.Update, id); ok {
				out[id] = st
			}
		}
	}
	return out
}

// completed is the calls among ids the client was shown completed.
func (c *sdkClient) completed(ids ...string) map[string]bool {
	out := map[string]bool{}
	for id, st := range c.statuses(ids...) {
		if st == sdk.ToolCallStatusCompleted {
			out[id] = true
		}
	}
	return out
}

func toolStatus(u sdk.SessionUpdate, id string) (sdk.ToolCallStatus, bool) {
	switch {
	case u.ToolCall != nil && string(u.ToolCall.ToolCallId) == id:
		return u.ToolCall.Status, true
	case u.ToolCallUpdate != nil && string(u.ToolCallUpdate.ToolCallId) == id && u.ToolCallUpdate.Status != nil:
		return *u.ToolCallUpdate.Status, true
	}
	return "", false
}

// TestCrashThenLoad kills the bridge with SIGKILL while a tool call runs,
// starts a new process on the same state directory, and loads the session
// with an independent client: everything the first process showed comes
// back, in order; the interrupted call ends failed; and the conversation
// goes on.
var replayedUserID = regexp.MustCompile(`"messageId":"user-\d+",`)

// withoutUserIDs is a replay without the ids of the user's messages, to
// compare with what the client saw live (it had no id for its own
// messages); each must have one. The agent's messages carry the same ids
// as live, in a new process too.
func withoutUserIDs(t *testing.T, lines []string) []string {
	t.Helper()
	for i, l := range lines {
		if strings.Contains(l, `"sessionUpdate":"user_message_chunk"`) {
			if !strings.Contains(l, `"messageId":"user-`) {
				t.Errorf("a replayed user message has no id: %s", l)
			}
			lines[i] = replayedUserID.ReplaceAllString(l, "")
		}
	}
	return lines
}

func TestCrashThenLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildCrashBridge(t)
	work, state, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Reading a FIFO with no writer blocks in open(2): the call is running
	// when the process dies.
	if err := syscall.Mkfifo(filepath.Join(work, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := writeScript(t, scripts, "first.json",
		`{"parts":[{"thought":"Read it first."},{"text":"Reading a.go."},{"tool_call":{"id":"r1","name":"read","arguments":{"file_path":"a.go"}}}]}`,
		`{"parts":[{"text":"a.go declares one function, A."}]}`,
		`{"parts":[{"text":"Reading the pipe."},{"tool_call":{"id":"r2","name":"read","arguments":{"file_path":"pipe"}}}]}`)
	second := writeScript(t, scripts, "second.json", `{"parts":[{"text":"Back, and the pipe read was lost."}]}`)
	ctx := t.Context()

	// The first process: one whole turn, then a turn killed mid-call.
	b1 := startCrashBridge(t, bin, "--state-dir", state, "--model", "script:"+first, "--log-level", "debug")
	if _, err := b1.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := b1.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: work, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := sess.SessionId
	prompt := func(b *crashBridge, text string) (sdk.PromptResponse, error) {
		return b.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	}
	if r, err := prompt(b1, "What does a.go do?"); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("turn 1: %v %v", r, err)
	}
	turn1 := len(b1.client.wire(t))
	go prompt(b1, "Now read the pipe.")
	b1.client.waitFor(t, "the pipe read to run", func(u sdk.SessionUpdate) bool {
		st, ok := toolStatus(u, "r2")
		return ok && st == sdk.ToolCallStatusInProgress
	})
	if err := b1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	b1.cmd.Wait()
	live := b1.client.wire(t)

	// A new process loads it.
	b2 := startCrashBridge(t, bin, "--state-dir", state, "--model", "script:"+second)
	init, err := b2.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.LoadSession || init.AgentCapabilities.SessionCapabilities.List == nil ||
		init.AgentCapabilities.SessionCapabilities.Resume == nil {
		t.Fatalf("capabilities %+v: loadSession, list and resume must be advertised", init.AgentCapabilities)
	}
	list, err := b2.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &work})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Title == nil ||
		*list.Sessions[0].Title != "What does a.go do?" || list.Sessions[0].UpdatedAt == nil {
		t.Fatalf("session/list = %+v", list.Sessions)
	}
	if _, err := time.Parse(time.RFC3339, *list.Sessions[0].UpdatedAt); err != nil {
		t.Errorf("updatedAt: %v", err)
	}
	if _, err := b2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: work, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replay := withoutUserIDs(t, b2.client.wire(t))

	// The replay is the live stream with the user's prompts before each
	// turn, then the endings the crash prevented.
	user := func(text string) string {
		b, _ := json.Marshal(sdk.UpdateUserMessageText(text))
		return string(b)
	}
	want := append([]string{user("What does a.go do?")}, live[:turn1]...)
	want = append(want, user("Now read the pipe."))
	want = append(want, live[turn1:]...)
	if len(replay) < len(want) || !slices.Equal(replay[:len(want)], want) {
		t.Fatalf("the replay does not bring back what the first process showed:\nlive+prompts:\n%s\nreplay:\n%s",
			strings.Join(want, "\n"), strings.Join(replay, "\n"))
	}
	final := b2.client.statuses("r1", "r2")
	if final["r1"] != sdk.ToolCallStatusCompleted || final["r2"] != sdk.ToolCallStatusFailed {
		t.Errorf("final statuses %v: r1 must stay completed, the interrupted r2 must end failed", final)
	}
	var failedText string
	for _, u := range replay[len(want):] {
		if strings.Contains(u, `"toolCallId":"r2"`) {
			failedText = u
		}
	}
	if !strings.Contains(failedText, "interrupted") || !strings.Contains(failedText, `"status":"failed"`) {
		t.Errorf("the interrupted call's final update is %s", failedText)
	}

	// The session is live again and goes on.
	if r, err := prompt(b2, "Are you back?"); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after load: %v %v", r, err)
	}
	b2.client.waitFor(t, "the answer after the load", func(u sdk.SessionUpdate) bool {
		return u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil &&
			strings.Contains(u.AgentMessageChunk.Content.Text.Text, "Back")
	})
	b2.stdin.Close()
	if err := b2.cmd.Wait(); err != nil {
		t.Errorf("the second process did not exit cleanly: %v", err)
	}

	// A third process loads the same session: nothing was lost between them.
	b3 := startCrashBridge(t, bin, "--state-dir", state)
	if _, err := b3.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if _, err := b3.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: work, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	again := withoutUserIDs(t, b3.client.wire(t))
	if !slices.Equal(again[:len(replay)], replay) || len(again) <= len(replay) {
		t.Errorf("a later load differs from the first one (%d updates, then %d)", len(replay), len(again))
	}
	if !strings.Contains(strings.Join(again, "\n"), user("Are you back?")) {
		t.Error("the turn made after the first load is missing")
	}
}
