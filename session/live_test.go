package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLogHeldByAnotherStore: two stores on one directory stand for two
// processes. A log one holds is busy for the other (open and delete) until
// it is closed; then it opens there and is busy for the first.
func TestLogHeldByAnotherStore(t *testing.T) {
	dir := t.TempDir()
	one, err := OpenStore(dir, &StoreOptions{Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	two, err := OpenStore(dir, &StoreOptions{Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	lg, err := one.Create(Header{ID: "s", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	lg.Append(New(Notice{Text: "one"}))
	if _, _, err := two.Open("s"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Open of a log another store holds = %v, want ErrBusy", err)
	}
	if err := two.Delete("s"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Delete of a log another store holds = %v, want ErrBusy", err)
	}
	if h, ok := two.Holder("s"); !ok || h.PID != os.Getpid() || h.Busy {
		t.Errorf("Holder = %+v, %v; want this process, idle", h, ok)
	}
	lg.SetBusy(true)
	if h, _ := two.Holder("s"); !h.Busy {
		t.Errorf("Holder during a turn = %+v, want busy", h)
	}
	lg.SetBusy(false)
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := two.Holder("s"); ok {
		t.Error("a closed log still has a holder record")
	}
	lg2, _, err := two.Open("s")
	if err != nil {
		t.Fatalf("Open after the holder closed: %v", err)
	}
	lg2.Append(New(Notice{Text: "two"}))
	if _, _, err := one.Open("s"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Open by the first store after the second took it = %v, want ErrBusy", err)
	}
	lg2.Close()
	_, evs, err := one.Read("s")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range evs {
		texts = append(texts, e.Payload.(Notice).Text)
	}
	if d := cmp.Diff([]string{"one", "two"}, texts); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// TestHolderThatIsGoneFreesTheLog: a holder record left by a process that
// ended (killed: its record stays, its lock went with it) does not keep
// the session busy; its lock file is removed.
func TestHolderThatIsGoneFreesTheLog(t *testing.T) {
	for _, c := range []struct {
		name     string
		holder   string
		lockFile bool // the gone store's lock file is still there, unlocked
	}{
		{"lock file left", `{"pid":1,"busy":true,"token":"1-dead"}`, true},
		{"lock file gone", `{"pid":1,"busy":true,"token":"1-dead"}`, false},
		{"no token (an older acp-bridge, whose lock went with its log's descriptor)", `{"pid":1,"busy":false}`, false},
		{"not a record", `garbage`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newStore(t)
			lg, err := st.Create(Header{ID: "s", Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			lg.Close()
			p := filepath.Join(st.Dir(), "s.jsonl")
			if err := os.WriteFile(holderPath(p), []byte(c.holder), 0o600); err != nil {
				t.Fatal(err)
			}
			gone := filepath.Join(st.Dir(), liveDir, "1-dead")
			if c.lockFile {
				if err := os.WriteFile(gone, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			lg, _, err = st.Open("s")
			if err != nil {
				t.Fatalf("Open with a holder that is gone: %v", err)
			}
			defer lg.Close()
			if h, ok := st.Holder("s"); !ok || h.Token == "1-dead" {
				t.Errorf("holder after Open = %+v, %v; want this store", h, ok)
			}
			if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the gone store's lock file is still there (%v)", err)
			}
		})
	}
}

// TestCloseSyncsWhatIdleWritesLeft: events written between turns are not
// synced one by one (the file is closed after each); Close syncs them.
func TestCloseSyncsWhatIdleWritesLeft(t *testing.T) {
	f := &fakeFile{}
	opens := 0
	lg := &Log{now: clock(), w: &writer{open: func() (logFile, error) { opens++; return f, nil }, log: discard()}}
	lg.Append(New(Notice{Text: "a"}))
	lg.Append(New(Notice{Text: "b"}))
	if len(f.syncedAt) != 0 {
		t.Errorf("synced after %v; a notice is not a boundary", f.syncedAt)
	}
	lg.SetBusy(true)
	for _, e := range turn(1, "hi") {
		lg.Append(e)
	}
	lg.SetBusy(false)
	lg.Append(New(Notice{Text: "c"}))
	lg.Close()
	if opens != 5 {
		t.Errorf("the file was opened %d times, want 5: once per idle write, once for the turn, once to sync at Close", opens)
	}
	want := []string{TypeUserMessage, TypeTurnStart, TypeToolResult, TypeTurnEnd, TypeNotice}
	if d := cmp.Diff(want, f.syncedAt); d != "" {
		t.Errorf("syncs (-want +got):\n%s", d)
	}
}
