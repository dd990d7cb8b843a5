//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// soakRuns is how many times TestCrashSoak kills a bridge: a few by default
// (the suite stays within minutes), more with ACP_BRIDGE_SOAK_RUNS=100.
func soakRuns(t *testing.T) int {
	if v := os.Getenv("ACP_BRIDGE_SOAK_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ACP_BRIDGE_SOAK_RUNS=%q: want a positive number", v)
		}
		return n
	}
	return 3
}

// TestCrashSoak kills the bridge with SIGKILL at a random moment of a turn
// that streams, runs bash, reads a 2 MB file, edits it and writes a new one,
// then starts a fresh bridge on the same state directory, which lists and
// loads the session. Each run checks: the load succeeds; every call the
// editor saw completed comes back completed; the edited file is whole (old
// or new, never half); and nothing the bridge wrote stays in the workspace
// (the half-written temporary file a kill mid-write leaves is removed by the
// next bridge).
func TestCrashSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	runs := soakRuns(t)
	bin := buildCrashBridge(t)
	filler := strings.Repeat("0123456789abcdef", 2<<20/16) // 2 MiB
	original := "marker-old\n" + filler
	edited := "marker-new\n" + filler
	call := func(id, name string, args any) string {
		a, _ := json.Marshal(args)
		return fmt.Sprintf(`{"parts":[{"text":"Step %s."},{"tool_call":{"id":%q,"name":%q,"arguments":%s}}]}`, id, id, name, a)
	}
	scripts := t.TempDir()
	script := writeScript(t, scripts, "soak.json",
		call("b1", "bash", map[string]string{"command": "echo start; for i in 1 2 3; do echo $i; sleep 0.01; done"}),
		call("r1", "read", map[string]any{"file_path": "target.txt", "limit": 5}),
		call("e1", "edit", map[string]string{"file_path": "target.txt", "old_string": "marker-old", "new_string": "marker-new"}),
		call("w1", "write", map[string]string{"file_path": "new.txt", "content": filler}),
		`{"parts":[{"text":"All done."}]}`)
	after := writeScript(t, scripts, "after.json", `{"parts":[{"text":"Back."}]}`)
	var stats struct{ completedSteps, checked, tempsRemoved, midEdit int }
	for run := range runs {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			work, state := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "target.txt"), []byte(original), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			b1 := startCrashBridge(t, bin, "--state-dir", state, "--model", "script:"+script, "--permission-mode", "bypass")
			if _, err := b1.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
				t.Fatal(err)
			}
			sess, err := b1.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: work, McpServers: []sdk.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			go b1.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("do it all")}})
			// A random moment from the prompt's arrival to past the turn's
			// end (a turn takes some hundreds of ms here).
			time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond)
			b1.cmd.Process.Signal(syscall.SIGKILL)
			b1.cmd.Wait()
			completed := b1.client.completed("b1", "r1", "e1", "w1")
			temps, _ := filepath.Glob(filepath.Join(work, ".*.acp-bridge-*"))
			if len(temps) > 0 {
				stats.midEdit++
			}

			b2 := startCrashBridge(t, bin, "--state-dir", state, "--model", "script:"+after)
			if _, err := b2.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
				t.Fatal(err)
			}
			list, err := b2.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &work})
			// A session killed before its prompt was logged has none, and
			// sessions without a prompt are not listed (they still load).
			if err != nil || len(list.Sessions) > 1 || len(list.Sessions) == 1 && list.Sessions[0].SessionId != sess.SessionId ||
				len(list.Sessions) == 0 && len(completed) > 0 {
				t.Fatalf("session/list = %+v, %v (calls completed: %v)", list.Sessions, err, completed)
			}
			if _, err := b2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sess.SessionId, Cwd: work, McpServers: []sdk.McpServer{}}); err != nil {
				t.Fatalf("load after a kill %v: %v", completed, err)
			}
			replayed := b2.client.completed(slices.Collect(maps.Keys(completed))...)
			for id := range completed {
				if !replayed[id] {
					t.Errorf("call %s completed before the kill but not in the replay", id)
				}
			}
			stats.completedSteps += len(completed)
			// The edited file is whole, old or new.
			if b, err := os.ReadFile(filepath.Join(work, "target.txt")); err != nil || (string(b) != original && string(b) != edited) {
				t.Errorf("target.txt is neither the old nor the new content (%d bytes, %v)", len(b), err)
			}
			if b, err := os.ReadFile(filepath.Join(work, "new.txt")); err == nil && !bytes.Equal(b, []byte(filler)) {
				t.Errorf("new.txt is half written: %d bytes", len(b))
			}
			// The new bridge sweeps at start, off the start-up path.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				left, _ := filepath.Glob(filepath.Join(work, ".*"))
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("left in the workspace after the next start: %v", left)
				}
			}
			stats.tempsRemoved += len(temps)
			entries, _ := os.ReadDir(work)
			for _, e := range entries {
				if n := e.Name(); n != "target.txt" && n != "new.txt" {
					t.Errorf("a file the user did not have: %s", n)
				}
			}
			b2.stdin.Close()
			b2.cmd.Wait()
			stats.checked++
		})
	}
	t.Logf("%d runs checked: %d completed steps all replayed, %d killed mid-write (temporary file left, then removed by the next start: %d files)",
		stats.checked, stats.completedSteps, stats.midEdit, stats.tempsRemoved)
}

// leaveTempFiles leaves in work what a bridge killed mid-write leaves: a
// temporary file beside the file it was writing, listed in the journal of
// its (gone) process in state, and returns it with a file of the same
// shape of name that no journal lists.
func leaveTempFiles(t *testing.T, work, state string) (left, notListed string) {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	pid := dead.Process.Pid
	left = filepath.Join(work, fmt.Sprintf(".target.txt.acp-bridge-%d-4242", pid))
	notListed = filepath.Join(work, fmt.Sprintf(".other.txt.acp-bridge-%d-4343", pid))
	for _, p := range []string{left, notListed} {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	jdir := filepath.Join(state, "tmpfiles")
	if err := os.MkdirAll(jdir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jdir, strconv.Itoa(pid)+".tmpfiles"), []byte(left+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return left, notListed
}

// TestNextStartRemovesTempFiles: a temporary file a killed bridge recorded
// and left beside a file it was writing is removed by the next bridge to
// start; a file with the same shape of name that no journal lists is not.
func TestNextStartRemovesTempFiles(t *testing.T) {
	work, state := t.TempDir(), t.TempDir()
	left, notListed := leaveTempFiles(t, work, state)
	b := startFaultBridge(t, "--state-dir", state)
	b.call("init", "initialize", `{"protocolVersion":1}`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(left); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the recorded temporary file is still there after the next start")
		}
	}
	if _, err := os.Stat(notListed); err != nil {
		t.Errorf("a file no journal lists was removed: %v", err)
	}
}

// TestNextLoadRemovesTempFiles: a bridge killed while another one ran
// (its temporary file left after that one started) leaves nothing once
// the running bridge loads the session: the load removes the files the
// journals of bridges that are gone list, and no other file.
func TestNextLoadRemovesTempFiles(t *testing.T) {
	work, state := t.TempDir(), t.TempDir()
	script := writeScript(t, t.TempDir(), "s.json", `{"parts":[{"text":"hi"}]}`)
	first := startFaultBridge(t, "--model", "script:"+script, "--state-dir", state)
	sid := first.newSession(work)
	if l := first.call("p", "session/prompt", promptParams(sid, "hello")); !bytes.Contains(l, []byte("end_turn")) {
		t.Fatalf("prompt: %s", l)
	}
	first.stdin.Close()
	<-first.exited

	running := startFaultBridge(t, "--model", "script:"+script, "--state-dir", state)
	running.call("init", "initialize", `{"protocolVersion":1}`)
	// What a bridge killed mid-edit after this one started leaves: its
	// journal, and the temporary file it lists.
	left, notListed := leaveTempFiles(t, work, state)
	l := running.call("load", "session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, sid, work))
	if bytes.Contains(l, []byte(`"error"`)) {
		t.Fatalf("session/load: %s", l)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the recorded temporary file is still there after the load (%v)", err)
	}
	if _, err := os.Stat(notListed); err != nil {
		t.Errorf("a file no journal lists was removed: %v", err)
	}
}
