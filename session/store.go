package session

// The session log on disk, one file per session, <state dir>/<id>.jsonl:
//
//	{"type":"session","version":1,"id":"…","cwd":"/abs","created":"…"}   the header
//	{"seq":1,"time":"…","type":"user/message","data":{…}}                 one event a line
//	{"seq":2,"time":"…","type":"turn/start","data":{"turn":1}}
//
// Sequence numbers are contiguous from 1. Each event is one write(2) of one
// line, so a killed process leaves whole lines; the file is fsync'd after
// the events syncAfter names. A reader drops a torn last line (no newline)
// and keeps the bytes it cut in <id>.jsonl.torn; any other line it cannot
// use (damaged, or an event type it does not know) costs that line only and
// is reported. Transient events (live tool output) are never written.
// Two processes never append to one session: the process holding a log
// says so in <id>.jsonl.holder, and its liveness is a lock it holds for
// its life (live.go). An idle log holds no descriptor: the file is open
// while a turn runs (Log.SetBusy) and for each write between turns.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// FormatVersion is the version of the log format written and read here. A
// log with another version is refused: guessing at a format would rebuild a
// different conversation than the one the user had.
const FormatVersion = 1

// headerType marks the first line of a log, so a log is recognisable on its own.
const headerType = "session"

// Header is the first line of a session log.
type Header struct {
	Type                  string    `json:"type"` // always "session"
	Version               int       `json:"version"`
	ID                    string    `json:"id"`
	Cwd                   string    `json:"cwd"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
	Created               time.Time `json:"created"`
}

// A reader leaves out an event it cannot use (damaged, or of a type it does
// not know, see decoders in codec.go) and says so: the rest of the session
// loads, and the user is told what the rebuilt session lacks.

// syncAfter says which events are synced to disk as soon as they are written:
// turn boundaries and tool results, the points a crash must not lose (a tool
// may have changed files the model must hear about). Events between them are
// written at once (a killed process loses nothing) but fsync'd with the next
// boundary, which bounds the cost of a streamed answer to one sync a turn.
func syncAfter(typ string) bool {
	switch typ {
	case TypeUserMessage, TypeTurnStart, TypeTurnEnd, TypeToolResult, TypeRewind, TypeFilesRestored:
		// A rewind is answered only once it is durable (agent/rewind.go).
		return true
	}
	return false
}

// ErrNotFound is returned for a session that has no log.
var ErrNotFound = errors.New("session log not found")

// ErrBusy is returned for a session whose log another process has open.
var ErrBusy = errors.New("session is open in another acp-bridge process")

// CorruptError is a log that cannot be read as a session. It names the file
// and line so a user can inspect it.
type CorruptError struct {
	Path   string
	Line   int // 1-based; 0: the file as a whole
	Reason string
}

func (e *CorruptError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("session log %s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("session log %s: line %d: %s", e.Path, e.Line, e.Reason)
}

// unknownType says why an event of a type this build does not know is left
// out: typically a newer acp-bridge wrote it.
func unknownType(seq int64, typ string) string {
	return fmt.Sprintf("event %d has type %q, which this version of acp-bridge does not know (a newer acp-bridge may have written it)", seq, typ)
}

// StoreOptions configure a Store. The zero value is valid.
type StoreOptions struct {
	Logger *slog.Logger     // write failures and skipped logs; default discard
	Now    func() time.Time // event times; default time.Now
}

// Store is a directory of session logs, one JSONL file per session.
type Store struct {
	dir string
	log *slog.Logger
	now func() time.Time

	mu    sync.Mutex
	infos map[string]cachedInfo // file name -> summary, valid while size and mtime match
	held  map[string]bool       // ids of the logs this store has open (live.go)

	liveMu sync.Mutex
	live   *os.File // this store's lock file, locked while it runs (live.go)
	token  string   // its name, in the holder records of the logs it holds
}

type cachedInfo struct {
	size  int64
	mtime time.Time
	info  Info
	err   error
}

// OpenStore uses dir for session logs, creating it (owner-only) if needed.
func OpenStore(dir string, o *StoreOptions) (*Store, error) {
	var opts StoreOptions
	if o != nil {
		opts = *o
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if dir == "" {
		return nil, errors.New("session store: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	// Logs hold prompts and file contents: only the user may read them.
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return &Store{dir: abs, log: opts.Logger, now: opts.Now, infos: map[string]cachedInfo{}, held: map[string]bool{}}, nil
}

// Dir is the store's absolute directory.
func (st *Store) Dir() string { return st.dir }

// ValidID reports whether id can name a stored session: 1 to 128 of
// [A-Za-z0-9._-], starting with a letter or digit, so it is usable as a
// file name and stays out of other directories (ids come from the client
// on load, resume and delete). A loop, not a regexp: a package-level
// regexp with {0,127} is compiled at every start of the binary.
func ValidID(id string) bool {
	if id == "" || len(id) > 128 || !alnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (st *Store) path(id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("%w: %q is not a valid session id", ErrNotFound, id)
	}
	return filepath.Join(st.dir, id+".jsonl"), nil
}

// Create starts the log of a new session and returns it, persisting every
// event appended from now on. The header is on disk before Create returns.
func (st *Store) Create(h Header) (*Log, error) {
	p, err := st.path(h.ID)
	if err != nil {
		return nil, err
	}
	h.Type, h.Version = headerType, FormatVersion
	if h.Created.IsZero() {
		h.Created = st.now().UTC()
	}
	line, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	tok, err := st.liveToken()
	if err != nil {
		return nil, fmt.Errorf("session store: create log of %s: %w", h.ID, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session store: create log of %s: %w", h.ID, err)
	}
	defer f.Close() // the lock is for the hand-over only: the log is idle now
	if err := lockFile(f); err != nil {
		return nil, fmt.Errorf("session store: lock log of %s: %w", h.ID, err)
	}
	// Assign, not declare: a write error scoped to the if was lost, and a
	// full disk then left a headerless file that no later read accepts.
	if _, err = f.Write(append(line, '\n')); err == nil {
		err = f.Sync()
	}
	if err != nil {
		os.Remove(p)
		return nil, fmt.Errorf("session store: write header of %s: %w", h.ID, err)
	}
	syncDir(st.dir)
	return &Log{now: st.now, w: st.writer(p, h.ID, tok)}, nil
}

// Read returns a session's header and events without opening it for writing.
func (st *Store) Read(id string) (Header, []Event, error) {
	p, err := st.path(id)
	if err != nil {
		return Header{}, nil, err
	}
	h, evs, _, _, err := readFile(p)
	return h, evs, err
}

// Open reads a session's log and returns it ready to go on: appended events
// continue its sequence in the same file. A torn last line (a crash in the
// middle of a write) is cut off first, so the next event starts a clean
// line; the bytes cut are kept in <id>.jsonl.torn. Damaged lines were left
// out (Log.Skipped says which). A log that cannot be opened for writing (a
// read-only store) is read all the same: the log is then not saved, and
// Log.Err says why from the start.
func (st *Store) Open(id string) (*Log, Header, error) {
	p, err := st.path(id)
	if err != nil {
		return nil, Header{}, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, Header{}, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		if !readOnly(err) {
			return nil, Header{}, fmt.Errorf("session store: open log of %s: %w", id, err)
		}
		return st.openReadOnly(p, id, err)
	}
	defer f.Close() // the lock is for the hand-over only: the log is idle after
	tok, err := st.liveToken()
	if err != nil {
		return nil, Header{}, fmt.Errorf("session store: open log of %s: %w", id, err)
	}
	// Lock before reading, so what is read is what this process goes on from.
	if err := lockFile(f); err != nil {
		return nil, Header{}, fmt.Errorf("session store: %s: %w", id, err)
	}
	if st.holds(id) || st.heldElsewhere(p, tok) {
		return nil, Header{}, fmt.Errorf("session store: %s: %w", id, ErrBusy)
	}
	h, evs, good, skipped, err := readFile(p)
	if err != nil {
		return nil, Header{}, err
	}
	lg := &Log{events: evs, last: lastSeq(evs, skipped), now: st.now, skipped: skipped}
	if fi, err := f.Stat(); err == nil && fi.Size() > good {
		if err := st.cutTorn(f, p, good, fi.Size()); err != nil {
			// Appending after a torn line would glue the next event to
			// it: go on in memory, and say so.
			lg.w = &writer{err: err, closed: true}
			return lg, h, nil
		}
	}
	lg.w = st.writer(p, id, tok)
	return lg, h, nil
}

// openReadOnly reads a log the store cannot write (werr says why): the
// session loads and replays, and is not saved.
func (st *Store) openReadOnly(p, id string, werr error) (*Log, Header, error) {
	h, evs, _, skipped, err := readFile(p)
	if err != nil {
		return nil, Header{}, err
	}
	st.log.Warn("session log is read-only; the session loads but is not saved", "session", id, "err", werr)
	lg := &Log{events: evs, last: lastSeq(evs, skipped), now: st.now, skipped: skipped,
		w: &writer{err: fmt.Errorf("the session store is not writable: %w", werr), closed: true}}
	return lg, h, nil
}

// readOnly reports whether a failed open for writing means the store may
// be read but not written.
func readOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, iofs.ErrPermission)
}

// lastSeq is where appending goes on: after the last event used, or after
// a damaged line that may have held a later number (its number unknown,
// so after the count of lines as well).
func lastSeq(evs []Event, skipped []*CorruptError) int64 {
	var last int64
	if len(evs) > 0 {
		last = evs[len(evs)-1].Seq
	}
	return max(last, int64(len(evs)+len(skipped)))
}

// cutTorn keeps the torn last line (bytes good to size of the log) in
// <log>.torn, then cuts it from the log.
func (st *Store) cutTorn(f *os.File, p string, good, size int64) error {
	r, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("keep torn line of %s: %w", p, err)
	}
	tail, err := io.ReadAll(io.NewSectionReader(r, good, size-good))
	r.Close()
	if err != nil {
		return fmt.Errorf("keep torn line of %s: %w", p, err)
	}
	keep := p + ".torn"
	k, err := os.OpenFile(keep, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("keep torn line of %s: %w", p, err)
	}
	if _, err = k.Write(append(tail, '\n')); err == nil {
		err = k.Sync()
	}
	if cerr := k.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("keep torn line of %s: %w", p, err)
	}
	st.log.Warn("session log had a torn last line; cut it, kept in "+keep, "path", p, "bytes", size-good)
	if err := f.Truncate(good); err != nil {
		return fmt.Errorf("cut torn line of %s: %w", p, err)
	}
	return nil
}

// Delete removes a session's log.
func (st *Store) Delete(id string) error {
	p, err := st.path(id)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		return fmt.Errorf("session store: delete %s: %w", id, err)
	}
	defer f.Close()
	// A log a process (this one or another) holds is not removed under it.
	if err := lockFile(f); err != nil {
		return fmt.Errorf("session store: delete %s: %w", id, err)
	}
	st.liveMu.Lock()
	own := st.token
	st.liveMu.Unlock()
	if st.holds(id) || st.heldElsewhere(p, own) {
		return fmt.Errorf("session store: delete %s: %w", id, ErrBusy)
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("session store: delete %s: %w", id, err)
	}
	// What a process that is gone left about it.
	os.Remove(holderPath(p))
	os.Remove(requestPath(p))
	st.mu.Lock()
	delete(st.infos, filepath.Base(p))
	st.mu.Unlock()
	syncDir(st.dir)
	return nil
}

// writer starts appending to the log at p for this store, which now holds
// it (token: its lock, see live.go).
func (st *Store) writer(p, id, token string) *writer {
	st.hold(id, true)
	w := &writer{path: p, token: token, log: st.log.With("session", id, "path", p),
		open:    func() (logFile, error) { return os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0) },
		release: func() { st.hold(id, false) }}
	w.writeHolder(false) // handover.go
	return w
}

// readFile reads and checks a whole log. good is the length of the part that
// was used: everything but a torn last line. skipped are the damaged lines
// left out.
func readFile(p string) (Header, []Event, int64, []*CorruptError, error) {
	return readFileOf(p, nil)
}

// readFileOf is readFile decoding only the payloads of the types decode
// wants (nil: all); the other events keep a nil Payload. Listing needs the
// titles, not the whole of every session.
func readFileOf(p string, decode func(typ string) bool) (Header, []Event, int64, []*CorruptError, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return Header{}, nil, 0, nil, fmt.Errorf("%w: %s", ErrNotFound, p)
		}
		return Header{}, nil, 0, nil, fmt.Errorf("session store: %w", err)
	}
	return parse(p, data, decode)
}

// Parse reads a log's bytes: the header line, then one event per line with
// increasing sequence numbers (1, 2, 3, ... as written). A last line
// without a newline is torn (a crash cut the write short): it is left out
// and good says where it starts. A complete line that cannot be used (not
// JSON, a damaged payload, a sequence number out of order, an event type
// this build does not know) costs that line only: it is left out and
// reported in skipped, as are events missing from the sequence. Only a
// damaged header fails the whole log (a *CorruptError). name is used in
// messages only.
func Parse(name string, data []byte) (h Header, evs []Event, good int64, skipped []*CorruptError, err error) {
	return parse(name, data, nil)
}

func parse(name string, data []byte, decode func(typ string) bool) (h Header, evs []Event, good int64, skipped []*CorruptError, err error) {
	line, rest, complete := cutLine(data)
	if !complete {
		return h, nil, 0, nil, &CorruptError{Path: name, Reason: "no complete header line (the file is empty or was cut while being created)"}
	}
	if err := json.Unmarshal(line, &h); err != nil || h.Type != headerType {
		return h, nil, 0, nil, &CorruptError{Path: name, Line: 1, Reason: "not a session header"}
	}
	if h.Version != FormatVersion {
		return h, nil, 0, nil, &CorruptError{Path: name, Line: 1, Reason: fmt.Sprintf(
			"format version %d, but this acp-bridge reads version %d", h.Version, FormatVersion)}
	}
	if !ValidID(h.ID) || !filepath.IsAbs(h.Cwd) {
		return h, nil, 0, nil, &CorruptError{Path: name, Line: 1, Reason: "header without a valid id and absolute cwd"}
	}
	good = int64(len(line)) + 1
	// A log line is some hundreds of bytes; guessing the count from the
	// size saves the slice regrowing on a large session.
	evs = make([]Event, 0, len(rest)/256+1)
	var last int64    // the last sequence number used
	skippedSince := 0 // lines skipped since the last event used
	skip := func(n int, reason string) {
		skipped = append(skipped, &CorruptError{Path: name, Line: n, Reason: reason})
		skippedSince++
	}
	for n := 2; len(rest) > 0; n++ {
		line, rest, complete = cutLine(rest)
		if !complete {
			break // torn last line: the writer always ends a line
		}
		good += int64(len(line)) + 1
		l, err := decodeLine(line)
		if err != nil {
			skip(n, "not a JSON event: "+err.Error())
			continue
		}
		switch {
		case l.Seq <= last:
			skip(n, fmt.Sprintf("event has seq %d, after %d (repeated or out of order)", l.Seq, last))
			continue
		case l.Time.IsZero():
			skip(n, fmt.Sprintf("event %d has no time", l.Seq))
			continue
		case !Known(l.Type):
			skip(n, unknownType(l.Seq, l.Type))
			continue
		case len(l.Data) == 0:
			skip(n, fmt.Sprintf("event %d has no data", l.Seq))
			continue
		}
		var p Payload
		if decode == nil || decode(l.Type) {
			p, err = decodePayload(l.Type, l.Data)
		}
		if err != nil {
			skip(n, fmt.Sprintf("event %d (%s) has a damaged payload: %v", l.Seq, l.Type, err))
			continue
		}
		if l.Seq > last+1 && skippedSince == 0 {
			skipped = append(skipped, &CorruptError{Path: name, Line: n, Reason: fmt.Sprintf("events %d to %d are missing", last+1, l.Seq-1)})
		}
		evs = append(evs, Event{Seq: l.Seq, Time: l.Time, Payload: p})
		last, skippedSince = l.Seq, 0
	}
	return h, evs, good, skipped, nil
}

// decodeLine reads one event line. Lines this package wrote have a fixed
// shape, {"seq":N,"time":"T","type":"X","data":D}, which is read directly:
// encoding/json would scan each line three times, and a large session has
// megabytes of them. Any other shape goes through encoding/json.
func decodeLine(b []byte) (wireLine, error) {
	if l, ok := decodeFast(b); ok {
		return l, nil
	}
	var l wireLine
	err := json.Unmarshal(b, &l)
	return l, err
}

func decodeFast(b []byte) (ev wireLine, ok bool) {
	line := b
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return ev, false
	}
	i := bytes.IndexByte(rest, ',')
	if i <= 0 {
		return ev, false
	}
	seq, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	if err != nil {
		return ev, false
	}
	var tm, typ []byte
	if tm, rest, ok = cutString(rest[i:], `,"time":"`); !ok {
		return ev, false
	}
	if typ, rest, ok = cutString(rest, `,"type":"`); !ok {
		return ev, false
	}
	data, ok := bytes.CutPrefix(rest, []byte(`,"data":`))
	if !ok || len(data) < 2 || data[len(data)-1] != '}' {
		return ev, false
	}
	data = data[:len(data)-1]
	t, err := time.Parse(time.RFC3339Nano, string(tm))
	// Every payload is an object, and it must end where the line does; its
	// own decoding (Parse) checks the rest.
	if err != nil || data[0] != '{' || objectEnd(data) != len(data) {
		return ev, false
	}
	// Data shares the file's buffer only until Parse decodes the payload.
	return wireLine{Seq: seq, Time: t, Type: string(typ), Data: data}, true
}

// objectEnd returns the length of the JSON object b starts with, matching
// braces outside strings, or -1 when it does not close.
func objectEnd(b []byte) int {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// cutString reads a plain ASCII JSON string that follows prefix.
func cutString(b []byte, prefix string) (str, rest []byte, ok bool) {
	b, ok = bytes.CutPrefix(b, []byte(prefix))
	if !ok {
		return nil, nil, false
	}
	for i, c := range b {
		switch {
		case c == '"':
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			// Escapes and non-ASCII are encoding/json's to read: times
			// and event types are plain ASCII.
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// cutLine splits off the first line; complete is false when no newline ends it.
func cutLine(b []byte) (line, rest []byte, complete bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

// writer appends one log's events to its file. A failing disk must not end
// the session: the first failure is logged, the session goes on in memory,
// and Err reports it. The file is open while a turn runs (busy) and closed
// after each write between turns, so an idle session holds no descriptor;
// it is opened without O_CREATE: a log removed under the session is not
// started again headerless.
type writer struct {
	f       logFile                 // open, or nil
	open    func() (logFile, error) // nil: never stored (UnsavedLog)
	release func()                  // tells the store the log is no longer held
	path    string
	token   string // the holding store's (live.go), for the holder record
	log     *slog.Logger
	buf     []byte
	err     error
	busy    bool // a turn runs: keep the file open between writes
	dirty   bool // written since the last sync
	closed  bool
}

type logFile interface {
	io.Writer
	Sync() error
	Close() error
}

// write is called by Log.Append, under the log's lock, for every stored event.
func (w *writer) write(ev Event) {
	if w.err != nil || w.closed {
		return
	}
	b, err := encodeEvent(ev)
	if err != nil {
		w.fail(fmt.Errorf("encode event %d: %w", ev.Seq, err))
		return
	}
	if w.f == nil {
		if w.f, err = w.open(); err != nil {
			w.f = nil
			w.fail(fmt.Errorf("open the log to append event %d: %w", ev.Seq, err))
			return
		}
	}
	// One write per line: a process killed between two writes leaves whole lines.
	w.buf = append(append(w.buf[:0], b...), '\n')
	if _, err := w.f.Write(w.buf); err != nil {
		w.fail(fmt.Errorf("append event %d: %w", ev.Seq, err))
		return
	}
	w.dirty = true
	if syncAfter(ev.Type()) {
		if err := w.f.Sync(); err != nil {
			w.fail(fmt.Errorf("sync after event %d: %w", ev.Seq, err))
			return
		}
		w.dirty = false
	}
	if !w.busy {
		w.idle()
	}
}

// idle closes the file between turns. Unsynced events stay unsynced, as
// they would with the file open, until the next boundary or Close.
func (w *writer) idle() {
	if w.f == nil {
		return
	}
	err := w.f.Close()
	w.f = nil
	if err != nil && w.err == nil {
		w.fail(fmt.Errorf("close: %w", err))
	}
}

// setBusy keeps the file open while a turn runs, and closes it after.
func (w *writer) setBusy(busy bool) {
	if w.closed {
		return
	}
	w.busy = busy
	if !busy {
		w.idle()
	}
}

func (w *writer) fail(err error) {
	w.err = err
	// Info, not an error: the session's owner tells the user (agent: a
	// notice), and a client that shows stderr as errors would say it twice.
	w.log.Info("session log write failed; the session goes on without being saved", "err", err)
}

func (w *writer) close() error {
	if w.open == nil && w.f == nil {
		return nil // never opened (UnsavedLog): Err says why
	}
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.f == nil && w.dirty && w.err == nil {
		f, err := w.open()
		if err != nil {
			w.fail(fmt.Errorf("open the log to sync it: %w", err))
		} else {
			w.f = f
		}
	}
	if w.f != nil {
		var err error
		if w.dirty {
			err = w.f.Sync()
		}
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
		w.f = nil
		if w.err == nil && err != nil {
			w.err = err
		}
	}
	w.dropHolder()
	if w.release != nil {
		w.release()
	}
	return w.err
}

// Close syncs and closes the log's file; the log stays readable in memory
// and appends after Close are kept in memory only.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	return l.w.close()
}

// Err is the first error persisting this log met, or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	return l.w.err
}

// Len is the number of stored events, without copying them.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// Persistent reports whether the log is written to a store (not one
// that could not be: see UnsavedLog).
func (l *Log) Persistent() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w != nil && l.w.open != nil
}

// syncDir makes a created or removed file's directory entry durable. It is
// best effort: some systems cannot sync a directory, and the file's own data
// is synced either way.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
