//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fdCount is the number of descriptors process pid has open.
func fdCount(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(fds)
}

// limitFDs sets a running bridge's descriptor limit (as `ulimit -n` would
// have at its start: Go raises the soft limit to the hard one when a
// program starts, so it is set after).
func limitFDs(t *testing.T, pid int, n uint64) {
	t.Helper()
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: n, Max: n}, nil); err != nil {
		t.Skipf("prlimit: %v", err)
	}
}

// TestThousandSessionsUnderLowDescriptorLimit: with the descriptor limit
// at 256 (macOS's default), 1,000 sessions opened in one bridge (a prompt
// in every tenth) are all saved with no notice, the bridge holds no
// descriptor per idle session, and a second bridge under the same limit
// loads every one of them, replaying the prompted ones.
func TestThousandSessionsUnderLowDescriptorLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 sessions through the binary")
	}
	const sessions, every = 1000, 10
	state, work := t.TempDir(), t.TempDir()
	var answers []string
	for i := range sessions / every {
		answers = append(answers, fmt.Sprintf(`{"parts":[{"text":"answer-%d"}]}`, i))
	}
	script := writeScript(t, t.TempDir(), "s.json", answers...)

	b := startFaultBridge(t, "--model", "script:"+script, "--state-dir", state)
	b.call("init", "initialize", `{"protocolVersion":1}`)
	limitFDs(t, b.cmd.Process.Pid, 256)
	base := fdCount(t, b.cmd.Process.Pid)
	ids := make([]string, 0, sessions)
	for i := range sessions {
		l := b.call(fmt.Sprintf("n%d", i), "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
		var r struct {
			Result struct{ SessionID string } `json:"result"`
		}
		if json.Unmarshal(l, &r) != nil || r.Result.SessionID == "" {
			t.Fatalf("session/new %d: %s", i, l)
		}
		ids = append(ids, r.Result.SessionID)
		if i%every == 0 {
			if l := b.call(fmt.Sprintf("p%d", i), "session/prompt", promptParams(r.Result.SessionID, "hello")); !bytes.Contains(l, []byte("end_turn")) {
				t.Fatalf("prompt in session %d: %s", i, l)
			}
		}
	}
	b.call("list", "session/list", `{}`) // flushes notices that follow an answer
	open := fdCount(t, b.cmd.Process.Pid)
	t.Logf("first bridge: %d descriptors open with %d sessions live (%d before the first)", open, sessions, base)
	if open > base+8 {
		t.Errorf("%d descriptors open with %d idle sessions, %d before: idle sessions hold descriptors", open, sessions, base)
	}
	if b.saveNotices != 0 {
		t.Errorf("%d not-saved notices under a limit of 256", b.saveNotices)
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(state, id+".jsonl")); err != nil {
			t.Fatalf("session %s not saved: %v", id, err)
		}
	}
	b.stdin.Close()
	<-b.exited

	c := startFaultBridge(t, "--model", "script:"+script, "--state-dir", state)
	c.call("init", "initialize", `{"protocolVersion":1}`)
	limitFDs(t, c.cmd.Process.Pid, 256)
	base = fdCount(t, c.cmd.Process.Pid)
	for i, id := range ids {
		want := fmt.Sprintf(`"text":"answer-%d"`, i/every)
		replayed := false
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"l%d","method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, i, id, work))
		l := c.await("the answer to session/load", func(l []byte) bool {
			replayed = replayed || bytes.Contains(l, []byte(want))
			return bytes.Contains(l, []byte(fmt.Sprintf(`"id":"l%d"`, i))) && !bytes.Contains(l, []byte(`"method"`))
		})
		if bytes.Contains(l, []byte(`"error"`)) {
			t.Fatalf("session/load %d: %s", i, l)
		}
		if i%every == 0 && !replayed {
			t.Fatalf("session/load %d did not replay its answer", i)
		}
	}
	c.call("list2", "session/list", `{}`)
	open = fdCount(t, c.cmd.Process.Pid)
	t.Logf("second bridge: %d descriptors open with %d sessions loaded (%d before the first)", open, sessions, base)
	if open > base+8 {
		t.Errorf("%d descriptors open with %d loaded sessions, %d before", open, sessions, base)
	}
	if c.saveNotices != 0 {
		t.Errorf("%d not-saved notices while loading", c.saveNotices)
	}
	if log, _ := os.ReadFile(c.logFile); bytes.Contains(log, []byte("too many open files")) {
		i := bytes.Index(log, []byte("too many open files"))
		t.Errorf("the bridge ran out of descriptors: %s", strings.TrimSpace(string(log[max(0, i-300):i+20])))
	}
}
