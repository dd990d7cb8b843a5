//go:build linux

package session

import (
	"fmt"
	"os"
	"testing"
)

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(fds)
}

// TestIdleLogsHoldNoDescriptor: a store with hundreds of sessions open and
// idle has one descriptor open for them all (its lock, live.go); a turn
// keeps its log open while it runs, and closes it after.
func TestIdleLogsHoldNoDescriptor(t *testing.T) {
	st := newStore(t)
	before := openFDs(t)
	var logs []*Log
	for i := range 300 {
		lg, err := st.Create(Header{ID: fmt.Sprintf("s%d", i), Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		lg.Append(New(Notice{Text: "idle write"}))
		logs = append(logs, lg)
	}
	if n := openFDs(t) - before; n != 1 {
		t.Errorf("%d descriptors more with 300 idle logs open, want 1 (the store's lock)", n)
	}
	logs[7].SetBusy(true)
	for _, e := range turn(1, "hi") {
		logs[7].Append(e)
	}
	if n := openFDs(t) - before; n != 2 {
		t.Errorf("%d descriptors more during a turn, want 2 (the lock and the turn's log)", n)
	}
	logs[7].SetBusy(false)
	if n := openFDs(t) - before; n != 1 {
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
