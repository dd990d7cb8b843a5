package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"
)

// DefaultMaxMessageSize bounds one inbound line. A longer line is discarded
// with an invalid-request answer; the connection keeps serving.
const DefaultMaxMessageSize = 64 << 20

// lineStream is the newline-delimited JSON-RPC framing under jsonrpc2.Conn.
//
// sourcegraph/jsonrpc2 closes the whole connection on the first message it
// cannot decode, and it can only represent non-negative integer and string
// ids. An editor session must survive a bad line, so this stream screens every
// line first: malformed JSON gets -32700, a message that is not a valid
// request or response gets -32600 (both written here, with the right id when
// one can be read), and ids jsonrpc2 cannot carry (negative, fractional,
// huge numbers) are swapped for private string tokens on the way in and
// restored on the way out, so they are echoed exactly.
type lineStream struct {
	r       *bufio.Reader
	w       io.Writer
	closer  io.Closer
	maxLine int
	log     *slog.Logger
	onWrite func(error) // called with the first write error (the editor is gone)

	wmu     sync.Mutex
	wfailed bool

	idmu   sync.Mutex
	idSeq  int
	exotic map[string]json.RawMessage // token -> original id
}

const idTokenPrefix = "\x00acp-bridge-id:"

func newLineStream(r io.Reader, w io.Writer, closer io.Closer, maxLine int, log *slog.Logger, onWrite func(error)) *lineStream {
	if maxLine <= 0 {
		maxLine = DefaultMaxMessageSize
	}
	return &lineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, closer: closer, maxLine: maxLine, log: log, onWrite: onWrite}
}

// WriteObject writes one message and a newline in a single Write.
func (s *lineStream) WriteObject(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = s.restoreID(b)
	return s.writeLine(append(b, '\n'))
}

// writeLine writes one whole message line; it is the only writer.
func (s *lineStream) writeLine(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wfailed {
		return io.ErrClosedPipe
	}
	if _, err := s.w.Write(b); err != nil {
		s.wfailed = true
		if s.onWrite != nil {
			go s.onWrite(err)
		}
		return err
	}
	return nil
}

func (s *lineStream) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// ReadObject returns the next well-formed message, answering bad lines itself.
func (s *lineStream) ReadObject(v any) error {
	for {
		line, err := s.readLine()
		if errors.Is(err, errTooLong) {
			s.log.Warn("discarded an oversized message", "limit", s.maxLine)
			s.reject(nil, CodeInvalidRequest, fmt.Sprintf("message exceeds %d bytes", s.maxLine))
			continue
		}
		if err != nil {
			if len(line) == 0 {
				return err
			}
			// A last line without a newline still counts; EOF comes next call.
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err != nil {
				return err
			}
			continue
		}
		msg, ok := s.screen(line)
		if !ok {
			continue
		}
		reflect.ValueOf(v).Elem().SetZero()
		if uerr := json.Unmarshal(msg, v); uerr != nil {
			s.log.Warn("undecodable message", "err", uerr)
			s.reject(nil, CodeInvalidRequest, "invalid request: "+uerr.Error())
			continue
		}
		return nil
	}
}

var errTooLong = errors.New("line too long")

func (s *lineStream) readLine() ([]byte, error) {
	var buf []byte
	for {
		frag, err := s.r.ReadSlice('\n')
		if len(buf)+len(frag) > s.maxLine {
			// Drain the rest of the line, then report it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = s.r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
			return nil, errTooLong
		}
		buf = append(buf, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, err
	}
}

type probe struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// screen validates the envelope of one line. It answers invalid messages and
// returns ok=false for them.
func (s *lineStream) screen(line []byte) (msg []byte, ok bool) {
	if !json.Valid(line) {
		s.reject(nil, CodeParseError, "parse error: the line is not valid JSON")
		return nil, false
	}
	if !utf8.Valid(line) {
		// encoding/json would silently replace the bad bytes; say so instead.
		s.reject(nil, CodeParseError, "parse error: the message is not valid UTF-8")
		return nil, false
	}
	if line[0] != '{' {
		if line[0] == '[' {
			s.reject(nil, CodeInvalidRequest, "invalid request: batches are not supported")
		} else {
			s.reject(nil, CodeInvalidRequest, "invalid request: a message must be a JSON object")
		}
		return nil, false
	}
	var p probe
	if err := json.Unmarshal(line, &p); err != nil {
		s.reject(nil, CodeInvalidRequest, "invalid request: "+err.Error())
		return nil, false
	}
	hasID := len(p.ID) > 0 && string(p.ID) != "null"
	idKind := idKindOf(p.ID)
	var answerID json.RawMessage
	if idKind != idInvalid && hasID {
		answerID = p.ID
	}
	if string(p.JSONRPC) != `"2.0"` {
		isResponse := len(p.Result) > 0 || len(p.Error) > 0
		if len(p.Method) > 0 && hasID || len(p.Method) == 0 && !isResponse {
			s.reject(answerID, CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
		} else {
			// Nobody waits for an answer to a notification or a response.
			s.log.Warn(`dropped a message without "jsonrpc":"2.0"`)
		}
		return nil, false
	}
	isRequest := len(p.Method) > 0
	isResponse := len(p.Result) > 0 || len(p.Error) > 0
	switch {
	case isRequest && isResponse:
		s.reject(answerID, CodeInvalidRequest, "invalid request: a message cannot carry both method and result/error")
		return nil, false
	case isRequest:
		if p.Method[0] != '"' {
			s.reject(answerID, CodeInvalidRequest, `invalid request: "method" must be a string`)
			return nil, false
		}
		if len(p.ID) > 0 && idKind == idInvalid {
			s.reject(nil, CodeInvalidRequest, `invalid request: "id" must be a string or a number`)
			return nil, false
		}
		if len(p.ID) > 0 && string(p.ID) == "null" {
			s.reject(nil, CodeInvalidRequest, `invalid request: "id" must not be null`)
			return nil, false
		}
		if len(p.Params) > 0 && p.Params[0] != '{' && p.Params[0] != '[' && string(p.Params) != "null" {
			s.reject(answerID, CodeInvalidRequest, `invalid request: "params" must be an object or an array`)
			return nil, false
		}
		if idKind == idExotic {
			return s.swapID(line, p.ID), true
		}
		return line, true
	case isResponse:
		if idKind != idPlain {
			s.log.Warn("dropped a response whose id this agent never sent", "id", string(p.ID))
			return nil, false
		}
		return line, true
	default:
		s.reject(answerID, CodeInvalidRequest, "invalid request: neither a request (method) nor a response (result/error)")
		return nil, false
	}
}

type idKind int

const (
	idInvalid idKind = iota
	idPlain          // a string or a non-negative integer jsonrpc2 can carry
	idExotic         // a valid JSON-RPC number jsonrpc2 cannot carry
)

func idKindOf(raw json.RawMessage) idKind {
	if len(raw) == 0 || string(raw) == "null" {
		return idInvalid
	}
	switch raw[0] {
	case '"':
		return idPlain
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if n, err := strconv.ParseUint(string(raw), 10, 63); err == nil && strconv.FormatUint(n, 10) == string(raw) {
			return idPlain
		}
		return idExotic
	}
	return idInvalid
}

// swapID replaces an exotic numeric id with a private string token.
func (s *lineStream) swapID(line []byte, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return line
	}
	s.idmu.Lock()
	s.idSeq++
	tok := idTokenPrefix + strconv.Itoa(s.idSeq)
	if s.exotic == nil {
		s.exotic = map[string]json.RawMessage{}
	}
	s.exotic[tok] = append(json.RawMessage(nil), id...)
	s.idmu.Unlock()
	m["id"], _ = json.Marshal(tok)
	out, _ := json.Marshal(m)
	return out
}

// restoreID puts an exotic id back into an outgoing response.
func (s *lineStream) restoreID(b []byte) []byte {
	s.idmu.Lock()
	n := len(s.exotic)
	s.idmu.Unlock()
	if n == 0 || !bytes.Contains(b, []byte(`\u0000acp-bridge-id:`)) {
		return b
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	var tok string
	if json.Unmarshal(m["id"], &tok) != nil {
		return b
	}
	s.idmu.Lock()
	orig, ok := s.exotic[tok]
	delete(s.exotic, tok)
	s.idmu.Unlock()
	if !ok {
		return b
	}
	m["id"] = orig
	out, err := json.Marshal(m)
	if err != nil {
		return b
	}
	return out
}

// reject writes an error response for a message that never reaches a handler.
func (s *lineStream) reject(id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *Error          `json:"error"`
	}{"2.0", id, &Error{Code: code, Message: message}}
	if err := s.WriteObject(resp); err != nil {
		s.log.Debug("could not answer an invalid message", "err", err)
	}
}
