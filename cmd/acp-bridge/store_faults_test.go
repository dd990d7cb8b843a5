//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadOnlyStoreLoads: a state directory that became read-only (a
// remounted disk) still lists and loads its sessions, replaying them, and
// the editor is told that neither the loaded session nor a new one is
// saved.
func TestReadOnlyStoreLoads(t *testing.T) {
	state := smallDisk(t, 4<<20)
	script := writeScript(t, t.TempDir(), "script.json", `{"parts":[{"text":"answer one"}]}`, `{"parts":[{"text":"answer two"}]}`)
	work := t.TempDir()
	first := startFaultBridge(t, "--model", "script:"+script, "--state-dir", state)
	sid := first.newSession(work)
	if l := first.call("p1", "session/prompt", promptParams(sid, "hello")); !bytes.Contains(l, []byte("end_turn")) {
		t.Fatalf("prompt: %s", l)
	}
	first.stdin.Close()
	first.waitExit(time.Now(), 5*time.Second)
	if first.saveNotices != 0 {
		t.Fatalf("a writable store said %d times that it is not saving", first.saveNotices)
	}

	if err := syscall.Mount("tmpfs", state, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	second := startFaultBridge(t, "--model", "script:"+script, "--state-dir", state)
	second.call("init", "initialize", `{"protocolVersion":1}`)
	if l := second.call("list", "session/list", `{}`); !bytes.Contains(l, []byte(sid)) {
		t.Fatalf("session/list of a read-only store: %s", l)
	}
	replayed := false
	second.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"load","method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, sid, work))
	l := second.await("the load's answer", func(l []byte) bool {
		replayed = replayed || bytes.Contains(l, []byte(`"text":"one"`)) // "answer one", streamed by word
		return bytes.Contains(l, []byte(`"id":"load"`)) && !bytes.Contains(l, []byte(`"method"`))
	})
	if bytes.Contains(l, []byte(`"error"`)) || !replayed {
		t.Fatalf("session/load of a read-only store (replayed %v): %s", replayed, l)
	}
	if second.saveNotices == 0 { // else it came before the answer
		second.await("the not-saved notice of the loaded session", func(l []byte) bool { return bytes.Contains(l, []byte("no longer being saved")) })
	}
	if l := second.call("p2", "session/prompt", promptParams(sid, "again")); !bytes.Contains(l, []byte("end_turn")) {
		t.Fatalf("prompt in the loaded session: %s", l)
	}
	n := second.saveNotices
	second.call("new", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
	if second.saveNotices == n { // else it came before the answer
		second.await("the not-saved notice of a new session", func(l []byte) bool { return bytes.Contains(l, []byte("no longer being saved")) })
	}
	if second.saveNotices != n+1 {
		t.Errorf("notices %d, want %d", second.saveNotices, n+1)
	}
}

// TestLowDescriptorLimitTellsTheEditor: with the bridge's descriptor limit
// a little above what it has open, sessions opened past it cannot be saved:
// each one that is not tells the editor, and every one that is has a
// readable log.
func TestLowDescriptorLimitTellsTheEditor(t *testing.T) {
	state := t.TempDir()
	b := startFaultBridge(t, "--model", "script:"+writeScript(t, t.TempDir(), "s.json"), "--state-dir", state)
	b.call("init", "initialize", `{"protocolVersion":1}`)
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(b.cmd.Process.Pid) + "/fd")
	if err != nil {
		t.Skip(err)
	}
	lim := &unix.Rlimit{Cur: uint64(len(fds) + 16), Max: uint64(len(fds) + 16)}
	if err := unix.Prlimit(b.cmd.Process.Pid, unix.RLIMIT_NOFILE, lim, nil); err != nil {
		t.Skipf("prlimit: %v", err)
	}
	const sessions = 40
	work := t.TempDir()
	var ids []string
	for i := range sessions {
		l := b.call(fmt.Sprintf("n%d", i), "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
		if i := bytes.Index(l, []byte(`"sessionId":"`)); i >= 0 {
			rest := l[i+len(`"sessionId":"`):]
			ids = append(ids, string(rest[:bytes.IndexByte(rest, '"')]))
		}
	}
	// The notices follow each answer: a last call flushes them through.
	b.call("list", "session/list", `{}`)
	saved := 0
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(state, id+".jsonl")); err == nil {
			saved++
		}
	}
	t.Logf("%d of %d sessions saved, %d not-saved notices (limit %d descriptors)", saved, len(ids), b.saveNotices, lim.Cur)
	if saved == len(ids) {
		t.Fatal("every session was saved: the limit did not bite, the test proves nothing")
	}
	if unsaved := len(ids) - saved; b.saveNotices != unsaved {
		t.Errorf("%d sessions not saved, but the editor was told %d times", unsaved, b.saveNotices)
	}
}
