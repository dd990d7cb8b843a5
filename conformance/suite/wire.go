package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// Msg is one JSON-RPC 2.0 message as it travels on the wire.
type Msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// JSON-RPC and ACP error codes the checks expect.
const (
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	CodeNotFound       = -32002
	CodeCancelled      = -32800
)

// IsRequest reports whether m is a request: a method and an id.
func (m *Msg) IsRequest() bool { return m.Method != "" && hasID(m.ID) }

// IsNotification reports whether m is a notification: a method, no id.
func (m *Msg) IsNotification() bool { return m.Method != "" && !hasID(m.ID) }

// IsResponse reports whether m is a response: a result or an error, no method.
func (m *Msg) IsResponse() bool { return m.Method == "" && (len(m.Result) > 0 || m.Error != nil) }

func hasID(id json.RawMessage) bool { return len(id) > 0 && string(id) != "null" }

// idKey is a canonical form of a JSON-RPC id, so 1 and 1.0 are not confused
// with "1".
func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// Entry is one line on the wire, in the order the suite saw it.
type Entry struct {
	Seq  int                 `json:"seq"`
	Dir  acpschema.Direction `json:"-"`
	At   time.Duration       `json:"-"` // since the run started
	Line string              `json:"line"`
	Msg  *Msg                `json:"-"` // nil: not a JSON-RPC message
	// Deliberate marks a message the suite sent malformed on purpose; the
	// schema check of the client's side skips it.
	Deliberate bool `json:"-"`
}

// Arrow is how transcripts show the direction: → to the agent, ← from it.
func (e *Entry) Arrow() string {
	if e.Dir == acpschema.ToAgent {
		return "→"
	}
	return "←"
}

func (e *Entry) String() string { return e.Arrow() + " " + e.Line }

// Trace is the ordered record of one run's wire traffic. Waiters are woken on
// every append.
type Trace struct {
	start   time.Time
	mu      sync.Mutex
	entries []*Entry
	changed chan struct{}
}

func newTrace() *Trace { return &Trace{start: time.Now(), changed: make(chan struct{})} }

func (t *Trace) add(dir acpschema.Direction, line []byte, deliberate bool) *Entry {
	e := &Entry{Dir: dir, Line: string(line), Deliberate: deliberate}
	var m Msg
	if json.Unmarshal(line, &m) == nil && m.JSONRPC == "2.0" && (m.Method != "" || m.IsResponse()) {
		e.Msg = &m
	}
	t.mu.Lock()
	e.Seq = len(t.entries) + 1
	e.At = time.Since(t.start)
	t.entries = append(t.entries, e)
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()
	return e
}

// Entries returns the entries so far. The trace only ever appends, so the
// capped slice is a stable snapshot without a copy.
func (t *Trace) Entries() []*Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entries[:len(t.entries):len(t.entries)]
}

// Len is the number of entries so far.
func (t *Trace) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// wait returns the current entries and a channel closed at the next append.
func (t *Trace) wait() ([]*Entry, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entries[:len(t.entries):len(t.entries)], t.changed
}

// update is the decoded params of a session/update notification.
type update struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
	kind      string
	fields    map[string]json.RawMessage
}

// sessionUpdate decodes e when it is a session/update from the agent.
func sessionUpdate(e *Entry) (*update, bool) {
	if e.Dir != acpschema.FromAgent || e.Msg == nil || e.Msg.Method != "session/update" || hasID(e.Msg.ID) {
		return nil, false
	}
	var u update
	if json.Unmarshal(e.Msg.Params, &u) != nil {
		return nil, false
	}
	if json.Unmarshal(u.Update, &u.fields) != nil {
		return nil, false
	}
	_ = json.Unmarshal(u.fields["sessionUpdate"], &u.kind)
	return &u, true
}

func (u *update) str(field string) string {
	var s string
	_ = json.Unmarshal(u.fields[field], &s)
	return s
}

// sessionLevel reports update kinds that describe the session rather than a
// turn; agents may send them at any time.
func sessionLevel(kind string) bool {
	switch kind {
	case "available_commands_update", "current_mode_update", "config_option_update",
		"session_info_update", "usage_update":
		return true
	}
	return false
}

// params decodes a message's params into a generic object.
func params(m *Msg) map[string]json.RawMessage {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(m.Params, &p)
	return p
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// short trims a line for reports.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
