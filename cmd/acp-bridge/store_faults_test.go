//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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

// TestLowDescriptorLimitTellsTheEditor: a bridge that cannot open a file
// (its descriptors used up, by whatever else it has open: an idle session
// holds none, fds_linux_test.go) tells the editor of each session it cannot
// save, a new one at session/new and a stored one at the turn whose write
// fails; sessions saved before keep their logs, and once files open again
// a new session is saved.
func TestLowDescriptorLimitTellsTheEditor(t *testing.T) {
	state, work := t.TempDir(), t.TempDir()
	b := startFaultBridge(t, "--model", "script:"+writeScript(t, t.TempDir(), "s.json", `{"parts":[{"text":"answer one"}]}`), "--state-dir", state)
	b.call("init", "initialize", `{"protocolVersion":1}`)
	newSession := func(id string) string {
		l := b.call(id, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
		i := bytes.Index(l, []byte(`"sessionId":"`))
		if i < 0 {
			t.Fatalf("session/new: %s", l)
		}
		rest := l[i+len(`"sessionId":"`):]
		return string(rest[:bytes.IndexByte(rest, '"')])
	}
	saved := newSession("before")
	// Below the descriptors 0 to 2, which are always open: no file opens.
	var was unix.Rlimit
	if err := unix.Prlimit(b.cmd.Process.Pid, unix.RLIMIT_NOFILE, nil, &was); err != nil {
		t.Skipf("prlimit: %v", err)
	}
	if err := unix.Prlimit(b.cmd.Process.Pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 3, Max: was.Max}, nil); err != nil {
		t.Skipf("prlimit: %v", err)
	}
	const sessions = 10
	var unsaved []string
	for i := range sessions {
		unsaved = append(unsaved, newSession(fmt.Sprintf("n%d", i)))
	}
	if l := b.call("p", "session/prompt", promptParams(saved, "hello")); !bytes.Contains(l, []byte("end_turn")) {
		t.Fatalf("prompt: %s", l)
	}
	if err := unix.Prlimit(b.cmd.Process.Pid, unix.RLIMIT_NOFILE, &was, nil); err != nil {
		t.Fatal(err)
	}
	after := newSession("after")
	// The notices follow each answer: a last call flushes them through.
	b.call("list", "session/list", `{}`)
	for _, id := range unsaved {
		if _, err := os.Stat(filepath.Join(state, id+".jsonl")); err == nil {
			t.Errorf("session %s was saved with no descriptor to spare", id)
		}
	}
	for _, id := range []string{saved, after} {
		if _, err := os.Stat(filepath.Join(state, id+".jsonl")); err != nil {
			t.Errorf("session %s not saved: %v", id, err)
		}
	}
	if want := sessions + 1; b.saveNotices != want {
		t.Errorf("the editor was told %d times that a session is not saved, want %d (%d new sessions and one turn)", b.saveNotices, want, sessions)
	}
}
