//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// TestKillMidWrite kills the bridge with SIGKILL with half of a file's new
// content written, through a build that pauses there
// (internal/atomicfile/faults.go, -tags atomicfile_faults), and looks at
// the workspace while the write is paused and after the kill:
//
//   - unnamed (Linux): the write goes into an unnamed file (O_TMPFILE);
//     mid-write the workspace shows the file as it was and nothing else,
//     and after the kill too;
//   - named (the file system refuses O_TMPFILE, injected; the only way
//     elsewhere): mid-write the named temporary file is there, half
//     written; after the kill the watchdog that outlives the bridge removes
//     it and the journal that listed it, before any other bridge starts.
//
// Either way the file is whole (the old content) and the next start finds
// nothing left.
func TestKillMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "acp-bridge")
	if out, err := exec.Command("go", "build", "-tags", "atomicfile_faults", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags atomicfile_faults: %v\n%s", err, out)
	}
	original := "the old content\n"
	content := strings.Repeat("the new content, long enough to be seen half written\n", 20000) // 1 MiB
	call := func(id, name string, args any) string {
		a, _ := json.Marshal(args)
		return fmt.Sprintf(`{"parts":[{"tool_call":{"id":%q,"name":%q,"arguments":%s}}]}`, id, name, a)
	}
	script := writeScript(t, t.TempDir(), "write.json",
		call("r1", "read", map[string]any{"file_path": "target.txt"}),
		call("w1", "write", map[string]string{"file_path": "target.txt", "content": content}),
		`{"parts":[{"text":"Written."}]}`)

	cases := []struct {
		name  string
		env   string // the fault injected besides the pause
		named bool   // a named temporary file is expected mid-write
	}{
		{"named: O_TMPFILE refused", "ACP_BRIDGE_FAULT_NO_TMPFILE=1", true},
	}
	if runtime.GOOS == "linux" {
		cases = append([]struct {
			name  string
			env   string
			named bool
		}{{"unnamed", "", false}}, cases...)
	} else {
		cases[0].name = "named"
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work, state, ctl := t.TempDir(), t.TempDir(), t.TempDir()
			target := filepath.Join(work, "target.txt")
			if err := os.WriteFile(target, []byte(original), 0o644); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(ctl, "paused")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("ACP_BRIDGE_FAULT_PAUSE_WRITE", "target.txt="+fifo)
			if k, v, ok := strings.Cut(c.env, "="); ok {
				t.Setenv(k, v)
			}
			b := startCrashBridge(t, bin, "--state-dir", state, "--model", "script:"+script, "--permission-mode", "bypass")
			ctx := t.Context()
			sid := b.initSession(t, work)
			go b.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock("write it")}})

			// Opening the FIFO waits for the bridge to reach the middle of
			// the write.
			paused := make(chan error, 1)
			go func() {
				got, err := os.ReadFile(fifo)
				if err == nil && string(got) != "paused\n" {
					err = fmt.Errorf("the pause said %q", got)
				}
				paused <- err
			}()
			select {
			case err := <-paused:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the write never reached its middle")
			}
			during := listDir(t, work)
			var temps []string
			for _, n := range during {
				if n != "target.txt" {
					temps = append(temps, n)
				}
			}
			if c.named {
				if len(temps) != 1 || !strings.HasPrefix(temps[0], ".target.txt.acp-bridge-") {
					t.Fatalf("mid-write the workspace holds %q, want target.txt and its temporary file", during)
				}
				if st, err := os.Stat(filepath.Join(work, temps[0])); err != nil || st.Size() != int64(len(content)/2) {
					t.Fatalf("the temporary file mid-write: %v, %v; want %d bytes", st, err, len(content)/2)
				}
			} else if len(temps) != 0 {
				t.Fatalf("mid-write the workspace holds %q: a named file of a write into an unnamed one", during)
			}

			if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			b.cmd.Wait()
			if got, err := os.ReadFile(target); err != nil || string(got) != original {
				t.Fatalf("target.txt after the kill: %d bytes, %v; want the old content", len(got), err)
			}
			// Before any other bridge starts: the watchdog's work.
			journal := filepath.Join(state, "tmpfiles", fmt.Sprint(b.cmd.Process.Pid)+".tmpfiles")
			start := time.Now()
			for {
				left := listDir(t, work)
				_, jerr := os.Stat(journal)
				if len(left) == 1 && (!c.named || os.IsNotExist(jerr)) {
					break
				}
				if time.Since(start) > 30*time.Second {
					t.Fatalf("30 s after the kill the workspace holds %q (journal: %v)", left, jerr)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("%s: mid-write the workspace held %q; clean %v after the kill", c.name, during, time.Since(start).Round(time.Millisecond))

			// The next start finds nothing of the write, and the session loads.
			os.Unsetenv("ACP_BRIDGE_FAULT_PAUSE_WRITE")
			b2 := startCrashBridge(t, bin, "--state-dir", state)
			if _, err := b2.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
				t.Fatal(err)
			}
			if _, err := b2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sid, Cwd: work, McpServers: []sdk.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			b2.stdin.Close()
			b2.cmd.Wait()
			if left := listDir(t, work); len(left) != 1 {
				t.Errorf("after the next start the workspace holds %q", left)
			}
		})
	}
}

// initSession initializes the bridge and opens a session in cwd.
func (b *crashBridge) initSession(t *testing.T, cwd string) sdk.SessionId {
	t.Helper()
	if _, err := b.conn.Initialize(t.Context(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := b.conn.NewSession(t.Context(), sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return sess.SessionId
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}
