package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
)

// Handing a session over between processes. A client that starts one
// acp-bridge per chat (codecompanion) resumes a session in a new process
// while the old chat's process still holds its log (the lock in lockFile).
// The holder says in <log>.holder who it is (its pid, and the token of its
// lock, live.go, which says whether it still runs) and whether a turn is
// running;
// the one that wants the session leaves a request in <log>.handover and
// wakes the holder (signalHandOver). An idle holder closes its log (the
// lock goes with it) and tells its editor; a busy one is left alone, and
// the one asking says so to its user.

// Holder is what <log>.holder says about the process holding a log.
type Holder struct {
	PID   int    `json:"pid"`
	Busy  bool   `json:"busy"`            // a turn is running
	Token string `json:"token,omitempty"` // the holding store's lock (live.go)
}

func holderPath(logPath string) string  { return logPath + ".holder" }
func requestPath(logPath string) string { return logPath + ".handover" }

// writeHolder records this process as the log's holder.
func (w *writer) writeHolder(busy bool) {
	if w == nil || w.path == "" || w.closed {
		return
	}
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Busy: busy, Token: w.token})
	tmp := holderPath(w.path) + "." + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, holderPath(w.path))
	}
}

// dropHolder removes the holder record, if it is still this process's.
func (w *writer) dropHolder() {
	if w == nil || w.path == "" {
		return
	}
	if h, ok := readHolder(w.path); ok && h.Token == w.token {
		os.Remove(holderPath(w.path))
	}
	os.Remove(requestPath(w.path))
}

func readHolder(logPath string) (Holder, bool) {
	b, err := os.ReadFile(holderPath(logPath))
	if err != nil {
		return Holder{}, false
	}
	var h Holder
	return h, json.Unmarshal(b, &h) == nil && h.PID > 0
}

// SetBusy records whether a turn is running, for a process that would
// take the session over, and keeps the log's file open while it runs (an
// idle log holds no descriptor). A log kept in memory only has nothing to
// record.
func (l *Log) SetBusy(busy bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return
	}
	l.w.writeHolder(busy)
	l.w.setBusy(busy)
}

// HandOverRequested reports, once, whether another process asked for this
// log (RequestHandOver) since the last call.
func (l *Log) HandOverRequested() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil || l.w.path == "" || l.w.closed {
		return false
	}
	return os.Remove(requestPath(l.w.path)) == nil
}

// Holder says which process holds session id's log and whether it is
// running a turn; false when no process says it does.
func (st *Store) Holder(id string) (Holder, bool) {
	if !ValidID(id) {
		return Holder{}, false
	}
	return readHolder(filepath.Join(st.dir, id+".jsonl"))
}

// ErrHandOverUnsupported: this platform cannot wake the holding process.
var ErrHandOverUnsupported = errors.New("handing a session over between processes is not supported on this platform")

// RequestHandOver asks the process holding session id's log to let it go:
// a request beside the log, then a wake-up for the holder, which closes
// the log if it is idle. The caller opens the log again to see.
func (st *Store) RequestHandOver(id string) error {
	h, ok := st.Holder(id)
	if !ok {
		return errors.New("no process says it holds the session")
	}
	p := filepath.Join(st.dir, id+".jsonl")
	if err := os.WriteFile(requestPath(p), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	return signalHandOver(h.PID)
}
