//go:build unix

package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBinarySubagentCancel: the user cancels the turn while a subagent's
// command runs. The command's process is gone when the prompt answers
// cancelled, every card (the task's and the subagent's) has ended, and
// the permission prompt for the subagent's command named the subagent.
func TestBinarySubagentCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	pidFile := filepath.Join(work, "pid.txt")
	m := &routedMock{t: t}
	m.handle = func(w http.ResponseWriter, body map[string]any) {
		first := firstUser(body)
		switch {
		case first == "Run the long job" && step(body) == 0:
			calls(w, 10, 1, [3]string{"call_c", "task", taskArgs(t, map[string]any{"profile": "general", "description": "Long job", "prompt": "SUB-C: run the long job"})})
		case strings.HasPrefix(first, "SUB-C") && step(body) == 0:
			calls(w, 10, 1, [3]string{"b1", "bash", `{"command":"echo $$ > pid.tmp && mv pid.tmp pid.txt && exec sleep 300"}`})
		default:
			t.Errorf("unexpected request (the turn was cancelled): %q step %d", first, step(body))
			http.Error(w, "unexpected", http.StatusInternalServerError)
		}
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c := startE2E(t, mockEnv, mockArgs(srv)...)
	sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"]

	// The cancel goes when the subagent's command has written its pid: an
	// event, not a delay.
	sent := make(chan error, 1)
	go func() {
		for range 6000 {
			if _, err := os.Stat(pidFile); err == nil {
				c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
				sent <- nil
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		sent <- errors.New("the subagent's command never started")
	}()
	res := c.call("session/prompt", textPrompt(sid, "Run the long job"))
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if res["stopReason"] != "cancelled" {
		t.Errorf("stopReason = %v", res["stopReason"])
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the subagent's command (pid %d) outlived the cancel: %v", pid, err)
	}
	got := cards(c.notes)
	if len(got) != 2 || got[0].ID != "call_c" || got[1].ID != "call_c:task:1" || got[1].Parent != "call_c" {
		t.Fatalf("cards = %+v", got)
	}
	for _, cd := range got {
		if cd.Status != "failed" {
			t.Errorf("card %s ended %q, want failed", cd.ID, cd.Status)
		}
	}
	if len(c.perms) != 1 {
		t.Fatalf("permission requests = %d", len(c.perms))
	}
	tc := c.perms[0]["toolCall"].(map[string]any)
	if title, _ := tc["title"].(string); tc["toolCallId"] != "call_c:task:1" || !strings.HasPrefix(title, "general: ") {
		t.Errorf("the permission request does not name the subagent: %v", tc)
	}
}
