package suite

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Caps is what the emulated editor advertises in initialize.
type Caps struct {
	FS             bool // fs.readTextFile and fs.writeTextFile
	Terminal       bool // terminal/*
	TerminalOutput bool // _meta.terminal_output: Zed's display-terminal convention
	Elicitation    bool // elicitation form and url
	// TerminalOutputDelta is _meta.terminal_output_delta: live output as
	// appends (codex-acp's convention).
	TerminalOutputDelta bool
	Notices             bool // session.notices: notice updates
	Compaction          bool // session.compaction: compaction updates
	// Zed adds what Zed sends besides: auth.terminal, boolean config
	// options and _meta["terminal-auth"].
	Zed bool
}

// ZedCaps is what Zed sends (PROTOCOL.md §3).
var ZedCaps = Caps{FS: true, Terminal: true, TerminalOutput: true, Elicitation: true, Zed: true}

// JSON is the clientCapabilities object.
func (c Caps) JSON() map[string]any {
	m := map[string]any{
		"fs":       map[string]any{"readTextFile": c.FS, "writeTextFile": c.FS},
		"terminal": c.Terminal,
	}
	meta := map[string]any{}
	if c.TerminalOutput {
		meta["terminal_output"] = true
	}
	if c.Elicitation {
		m["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	if c.TerminalOutputDelta {
		meta["terminal_output_delta"] = true
	}
	sess := map[string]any{}
	if c.Notices {
		sess["notices"] = map[string]any{}
	}
	if c.Compaction {
		sess["compaction"] = map[string]any{}
	}
	if c.Zed {
		m["auth"] = map[string]any{"terminal": true}
		sess["configOptions"] = map[string]any{"boolean": map[string]any{}}
		meta["terminal-auth"] = true
	}
	if len(sess) > 0 {
		m["session"] = sess
	}
	if len(meta) > 0 {
		m["_meta"] = meta
	}
	return m
}

// allows reports whether an agent→client method is allowed by c.
func (c Caps) allows(method string) bool {
	switch {
	case method == "session/update", method == "session/request_permission",
		method == "$/cancel_request", strings.HasPrefix(method, "_"):
		return true
	case strings.HasPrefix(method, "fs/"):
		return c.FS
	case strings.HasPrefix(method, "terminal/"):
		return c.Terminal
	case strings.HasPrefix(method, "elicitation/"):
		return c.Elicitation
	}
	return false
}

// Answer is a scripted reply to one agent request (scenario files).
type Answer struct {
	Method string          `json:"method"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

// editor answers the agent's requests as a well-behaved client would: files
// from the workspace, real terminals, the first allow option, and
// "cancelled" for the permission requests of a turn being cancelled.
type editor struct {
	caps Caps
	root string // the workspace; writes outside it are refused
	term *terminals

	mu       sync.Mutex
	answers  []Answer                 // scripted replies, taken in order per method
	holding  map[string]chan struct{} // session → closed when its turn is cancelled
	released map[string]bool
}

func newEditor(caps Caps, root string) *editor {
	return &editor{caps: caps, root: root, term: newTerminals(root),
		holding: map[string]chan struct{}{}, released: map[string]bool{}}
}

// hold makes permission requests of session wait until release, then answer
// "cancelled": the client side of a turn the user stops while asked.
func (ed *editor) hold(session string) {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	ed.holding[session] = make(chan struct{})
	delete(ed.released, session)
}

func (ed *editor) release(session string) {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	if ch := ed.holding[session]; ch != nil && !ed.released[session] {
		close(ch)
	}
	ed.released[session] = true
}

func (ed *editor) scripted(method string) (Answer, bool) {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	for i, a := range ed.answers {
		if a.Method == method {
			ed.answers = append(ed.answers[:i], ed.answers[i+1:]...)
			return a, true
		}
	}
	return Answer{}, false
}

func methodNotFound(method string) *RPCError {
	return &RPCError{Code: CodeMethodNotFound, Message: "method not found: " + method}
}

func invalidParams(msg string) *RPCError {
	return &RPCError{Code: CodeInvalidParams, Message: "invalid params: " + msg}
}

func (ed *editor) serve(ctx context.Context, m *Msg) (any, *RPCError) {
	if !ed.caps.allows(m.Method) || strings.HasPrefix(m.Method, "_") {
		return nil, methodNotFound(m.Method)
	}
	if a, ok := ed.scripted(m.Method); ok {
		if a.Error != nil {
			return nil, a.Error
		}
		return a.Result, nil
	}
	p := params(m)
	switch m.Method {
	case "session/request_permission":
		return ed.permission(ctx, p)
	case "fs/read_text_file":
		return ed.readFile(p)
	case "fs/write_text_file":
		return ed.writeFile(p)
	case "elicitation/create":
		return map[string]any{"action": "decline"}, nil
	}
	if strings.HasPrefix(m.Method, "terminal/") {
		return ed.term.serve(ctx, m.Method, p)
	}
	return nil, methodNotFound(m.Method)
}

func (ed *editor) permission(ctx context.Context, p map[string]json.RawMessage) (any, *RPCError) {
	session := str(p["sessionId"])
	ed.mu.Lock()
	ch := ed.holding[session]
	ed.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	}
	var opts []option
	if json.Unmarshal(p["options"], &opts) != nil || len(opts) == 0 {
		return nil, invalidParams("options must be a non-empty array")
	}
	// allow_once first: the suite never widens a grant it was not asked to.
	pick := opts[0].OptionID
	for _, kind := range []string{"allow_once", "allow_always"} {
		if i := slices.IndexFunc(opts, func(o option) bool { return o.Kind == kind }); i >= 0 {
			pick = opts[i].OptionID
			break
		}
	}
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": pick}}, nil
}

type option struct {
	OptionID string `json:"optionId"`
	Kind     string `json:"kind"`
}

func (ed *editor) readFile(p map[string]json.RawMessage) (any, *RPCError) {
	path := str(p["path"])
	if !filepath.IsAbs(path) {
		return nil, invalidParams("path must be absolute")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &RPCError{Code: CodeNotFound, Message: "resource not found: " + path}
		}
		return nil, &RPCError{Code: CodeInternal, Message: err.Error()}
	}
	text := string(b)
	var line, limit int
	_ = json.Unmarshal(p["line"], &line)
	_ = json.Unmarshal(p["limit"], &limit)
	if line > 1 || limit > 0 {
		lines := strings.SplitAfter(text, "\n")
		start := max(line, 1) - 1
		if start > len(lines) {
			return nil, invalidParams("line is past the end of the file")
		}
		end := len(lines)
		if limit > 0 {
			end = min(end, start+limit)
		}
		text = strings.Join(lines[start:end], "")
	}
	return map[string]any{"content": text}, nil
}

func (ed *editor) writeFile(p map[string]json.RawMessage) (any, *RPCError) {
	path := str(p["path"])
	if !filepath.IsAbs(path) {
		return nil, invalidParams("path must be absolute")
	}
	if rel, err := filepath.Rel(ed.root, path); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// Zed refuses paths outside its worktrees; so does the suite, which
		// must never let an agent write outside the scratch workspace.
		return nil, &RPCError{Code: CodeNotFound, Message: "path is outside the workspace: " + path}
	}
	var content *string
	if json.Unmarshal(p["content"], &content) != nil || content == nil {
		return nil, invalidParams("content must be a string")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, &RPCError{Code: CodeInternal, Message: err.Error()}
	}
	if err := os.WriteFile(path, []byte(*content), 0o644); err != nil {
		return nil, &RPCError{Code: CodeInternal, Message: err.Error()}
	}
	return struct{}{}, nil
}
