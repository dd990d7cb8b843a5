//go:build linux

package session

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// openIn is the number of descriptors this process has open on files in
// dir. Only those: the collector may close other tests' files meanwhile.
func openIn(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, fd := range fds {
		if p, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(p, dir+string(os.PathSeparator)) {
			n++
		}
	}
	return n
}

// TestIdleLogsHoldNoDescriptor: a store with hundreds of sessions open and
// idle has one descriptor open for them all (its lock, live.go); a turn
// keeps its log open while it runs, and closes it after.
func TestIdleLogsHoldNoDescriptor(t *testing.T) {
	st := newStore(t)
	var logs []*Log
	for i := range 300 {
		lg, err := st.Create(Header{ID: fmt.Sprintf("s%d", i), Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		lg.Append(New(Notice{Text: "idle write"}))
		logs = append(logs, lg)
	}
	if n := openIn(t, st.Dir()); n != 1 {
		t.Errorf("%d descriptors more with 300 idle logs open, want 1 (the store's lock)", n)
	}
	logs[7].SetBusy(true)
	for _, e := range turn(1, "hi") {
		logs[7].Append(e)
	}
	if n := openIn(t, st.Dir()); n != 2 {
		t.Errorf("%d descriptors more during a turn, want 2 (the lock and the turn's log)", n)
	}
	logs[7].SetBusy(false)
	if n := openIn(t, st.Dir()); n != 1 {
		t.Errorf("%d descriptors more after the turn, want 1", n)
	}
	for _, lg := range logs {
		if err := lg.Close(); err != nil {
			t.Fatal(err)
		}
		if lg.Err() != nil {
			t.Fatal(lg.Err())
		}
	}
	for i := range 300 {
		_, evs, err := st.Read(fmt.Sprintf("s%d", i))
		if err != nil || len(evs) == 0 {
			t.Fatalf("session s%d: %d events, %v", i, len(evs), err)
		}
	}
}
