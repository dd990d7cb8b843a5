package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
)

// Streamable HTTP: POST carries the client's messages, GET streams (SSE)
// carry the agent's, one per connection plus one per session, DELETE ends
// the connection.

const transportHTTP = "http"

// streams are one HTTP connection's outbound mailboxes: "" is the
// connection stream, the others sessions'. A mailbox keeps what arrives
// until a GET takes it (nothing is lost between a POST and its GET);
// what all mailboxes hold together is bounded by limit.
type streams struct {
	mu       sync.Mutex
	boxes    map[string]*mailbox
	queued   int
	limit    int
	maxBoxes int
	done     chan struct{}
	closed   bool
}

type mailbox struct {
	q        [][]byte
	attached bool
	wake     chan struct{} // buffered 1: something arrived
}

func newStreams(limit, maxBoxes int) *streams {
	return &streams{boxes: map[string]*mailbox{"": newMailbox()}, limit: limit, maxBoxes: maxBoxes, done: make(chan struct{})}
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

func (s *streams) send(session string, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	b := s.boxes[session]
	if b == nil {
		b = s.boxes[""]
	}
	if s.queued+len(line) > s.limit {
		// The client is dropped: nothing queued is written any more.
		for _, b := range s.boxes {
			b.q = nil
		}
		s.queued = 0
		return errSlow
	}
	b.q = append(b.q, line)
	s.queued += len(line)
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return nil
}

// openSession makes the session's mailbox, so that its messages wait
// there (in order) for its GET.
func (s *streams) openSession(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.boxes[session] == nil && len(s.boxes) <= s.maxBoxes {
		s.boxes[session] = newMailbox()
	}
}

func (s *streams) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		// What is queued stays for a writer still at work (a socket's
		// last frames, ws.go); nothing more is queued.
		s.closed = true
		close(s.done)
	}
}

// attach gives a GET its mailbox, or the status refusing it: 409 when
// another GET has it, 503 when the connection has too many.
func (s *streams) attach(session string) (*mailbox, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, http.StatusNotFound
	}
	b := s.boxes[session]
	if b == nil {
		// The TypeScript SDK opens a session's stream before it sends
		// session/load, so a stream may come first (bounded).
		if len(s.boxes) > s.maxBoxes {
			return nil, http.StatusServiceUnavailable
		}
		b = newMailbox()
		s.boxes[session] = b
	}
	if b.attached {
		return nil, http.StatusConflict
	}
	b.attached = true
	return b, 0
}

func (s *streams) release(b *mailbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b.attached = false
}

// take empties a mailbox.
func (s *streams) take(b *mailbox) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := b.q
	b.q = nil
	for _, l := range q {
		s.queued -= len(l)
	}
	return q
}

// post takes one client message: initialize (no connection id yet) gets
// its answer in the body; anything else is accepted (202) and answered on
// a stream.
func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	// A body that trickles in holds a goroutine and a descriptor: it has
	// WriteTimeout to arrive, as a client has to read.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.o.WriteTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.o.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, "the body exceeds "+strings.TrimSpace(byteSize(s.o.MaxBody)))
			return
		}
		httpError(w, http.StatusBadRequest, "the body could not be read")
		return
	}
	if isBatch(body) {
		// Before the connection id is looked at: a batched initialize
		// gets the same answer as any other batch.
		batchRefused(w)
		return
	}
	id := r.Header.Get(HeaderConnectionID)
	if id == "" {
		s.initialize(w, r, body)
		return
	}
	c := s.lookup(id)
	if c == nil || c.transport != transportHTTP {
		httpError(w, http.StatusNotFound, "unknown connection")
		return
	}
	if err := c.deliver(body, r.Header.Get(HeaderSessionID), nil); err != nil {
		deliverError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// isBatch: the body is a JSON array (a JSON-RPC batch).
func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// batchRefused answers a batch as the RFD says, 501, with a JSON-RPC
// error a client's JSON-RPC layer can read (id null: a batch has none of
// its own). Over WebSocket the same error comes as a frame (ws.go).
func batchRefused(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotImplemented)
	w.Write(append(errorLine(json.RawMessage("null"), &acp.Error{Code: acp.CodeInvalidRequest, Message: errBatch.Error()}), '\n'))
}

func deliverError(w http.ResponseWriter, err error) {
	code := http.StatusBadRequest
	switch err {
	case errTooManySessions, errTooManyRequests, errBusy:
		code = http.StatusServiceUnavailable
	case errGone:
		code = http.StatusNotFound
	}
	httpError(w, code, err.Error())
}

// initialize opens a connection: its agent answers initialize, and the
// answer is the body, with the connection's id in the header.
func (s *Server) initialize(w http.ResponseWriter, r *http.Request, body []byte) {
	var m message
	if err := json.Unmarshal(body, &m); err != nil || m.Method != "initialize" || !m.hasID() {
		httpError(w, http.StatusBadRequest, "a POST without "+HeaderConnectionID+" must be initialize")
		return
	}
	c, err := s.open(transportHTTP, r.RemoteAddr)
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	c.setSink(newStreams(s.o.MaxBuffered, s.o.MaxSessions))
	reply := make(chan []byte, 1)
	if err := c.deliver(body, "", reply); err != nil {
		c.end(err.Error())
		deliverError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), initializeTimeout)
	defer cancel()
	var line []byte
	select {
	case line = <-reply:
	case <-ctx.Done():
		c.end("no answer to initialize")
		httpError(w, http.StatusServiceUnavailable, "the agent did not answer initialize")
		return
	}
	var ans message
	json.Unmarshal(line, &ans)
	w.Header().Set("Content-Type", "application/json")
	if len(ans.Error) > 0 {
		// No connection for a failed initialize: the client starts over.
		c.end("initialize failed")
	} else {
		w.Header().Set(HeaderConnectionID, c.id)
	}
	w.Write(line)
}

// get serves a connection's or a session's SSE stream.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	if !acceptsEventStream(r.Header.Values("Accept")) {
		httpError(w, http.StatusNotAcceptable, "Accept must include text/event-stream")
		return
	}
	id := r.Header.Get(HeaderConnectionID)
	if id == "" {
		httpError(w, http.StatusBadRequest, HeaderConnectionID+" is required")
		return
	}
	c := s.lookup(id)
	var st *streams
	if c != nil {
		c.mu.Lock()
		st, _ = c.out.(*streams)
		c.mu.Unlock()
	}
	if st == nil {
		httpError(w, http.StatusNotFound, "unknown connection")
		return
	}
	session := r.Header.Get(HeaderSessionID)
	if len(session) > maxIDBytes {
		httpError(w, http.StatusBadRequest, errLongID.Error())
		return
	}
	box, code := st.attach(session)
	if code != 0 {
		httpError(w, code, http.StatusText(code))
		return
	}
	defer st.release(box)
	c.listen(1)
	defer c.listen(-1)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	if session != "" {
		h.Set(HeaderSessionID, session)
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	keepAlive := time.NewTicker(s.o.KeepAlive)
	defer keepAlive.Stop()
	var frame bytes.Buffer
	for {
		if q := st.take(box); len(q) > 0 {
			frame.Reset()
			for _, l := range q {
				frame.WriteString("data: ")
				frame.Write(bytes.TrimRight(l, "\n"))
				frame.WriteString("\n\n")
			}
			if !s.write(w, rc, frame.Bytes()) {
				// What was taken is lost with the stream (the RFD's v1
				// replays nothing); a client too slow to take it is gone.
				c.drop("a stream could not be written")
				return
			}
			continue
		}
		select {
		case <-box.wake:
		case <-keepAlive.C:
			if !s.write(w, rc, []byte(": keep-alive\n\n")) {
				return
			}
		case <-r.Context().Done():
			return
		case <-st.done:
			return
		}
	}
}

// write writes and flushes within WriteTimeout.
func (s *Server) write(w http.ResponseWriter, rc *http.ResponseController, b []byte) bool {
	rc.SetWriteDeadline(time.Now().Add(s.o.WriteTimeout))
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// delete ends a connection: the client is gone (see conn).
func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(HeaderConnectionID)
	if id == "" {
		httpError(w, http.StatusBadRequest, HeaderConnectionID+" is required")
		return
	}
	c := s.lookup(id)
	if c == nil {
		httpError(w, http.StatusNotFound, "unknown connection")
		return
	}
	c.drop("client closed")
	w.WriteHeader(http.StatusAccepted)
}

func acceptsEventStream(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && (mt == "text/event-stream" || mt == "*/*") {
				return true
			}
		}
	}
	return false
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
