package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// fakeAgent is an in-memory ACP agent for the suite's own tests. By default
// it is conformant: a tool turn with a display terminal and a diff, load
// replay, cancel. Each flag plants one defect the suite must catch.
type fakeAgent struct {
	echoVersion        bool // echo an unsupported protocolVersion
	noise              bool // print a log line on stdout
	acceptRelative     bool // accept a relative cwd
	lateUpdate         bool // send an agent_message_chunk after the prompt response
	cancelError        bool // answer a cancelled prompt with an error
	unknownUpdate      bool // tool_call_update for an id never announced
	backward           bool // move a completed tool call back to in_progress
	alwaysFS           bool // call fs/read_text_file even when not advertised
	alwaysMeta         bool // send terminal _meta even when not advertised
	relativeDiff       bool // a diff with a relative path
	outputAfterExit    bool // terminal_output after terminal_exit
	badReplay          bool // replay a different agent message
	answerNotice       bool // answer unknown notifications with an error
	unknownMethodOK    bool // answer unknown methods with a result
	badSchema          bool // a tool_call without a title
	noLoad             bool // do not advertise loadSession
	extraCancelReply   bool // answer the cancelled prompt twice
	untitledPermission bool // ask permission for an unseen tool call without a title
	silentParse        bool // ignore lines that are not JSON
	replayFailed       bool // replay completed cards as failed
	noticeUnasked      bool // send a notice to a client that did not ask for them
	deltaUnasked       bool // send _meta.terminal_output_delta to a client that did not ask for it
	forkEmpty          bool // fork into a session without the original's history
	deleteUnknownFails bool // answer session/delete of an unknown id with an error
	refuseLiveLoad     bool // refuse session/load of a session live on this connection
	noName             bool // tool calls without a name
}

func (f *fakeAgent) launcher() Launcher {
	return func(ctx context.Context) (*Process, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		s := &fakeSession{f: f, w: outW, sessions: map[string]*fakeTurn{}, pending: map[string]chan json.RawMessage{}}
		go func() {
			defer close(done)
			s.serve(inR)
			outW.Close()
		}()
		return &Process{
			Stdin: inW, Stdout: outR, Stderr: func() string { return "" },
			Wait: func() error { <-done; return nil },
			Kill: func() { inR.CloseWithError(io.EOF); outW.Close() },
		}, nil
	}
}

type fakeTurn struct {
	cwd    string
	cancel chan struct{}
	log    []json.RawMessage // updates, for replay
}

type fakeSession struct {
	f        *fakeAgent
	mu       sync.Mutex
	w        io.Writer
	caps     Caps
	n        int
	sessions map[string]*fakeTurn
	wg       sync.WaitGroup
	pending  map[string]chan json.RawMessage
	reqID    int
}

func (s *fakeSession) write(v any) {
	b, _ := json.Marshal(v)
	s.writeRaw(append(b, '\n'))
}

func (s *fakeSession) writeRaw(lines []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(lines)
}

func (s *fakeSession) reply(id json.RawMessage, result any) {
	s.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (s *fakeSession) fail(id json.RawMessage, code int, msg string) {
	s.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

func (s *fakeSession) update(sid string, u map[string]any, record bool) {
	s.write(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid, "update": u}})
	if record {
		b, _ := json.Marshal(u)
		s.mu.Lock()
		s.sessions[sid].log = append(s.sessions[sid].log, b)
		s.mu.Unlock()
	}
}

// call sends a request to the client and waits for the result.
func (s *fakeSession) call(method string, params any) json.RawMessage {
	s.mu.Lock()
	s.reqID++
	id := fmt.Sprint(s.reqID)
	ch := make(chan json.RawMessage, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	s.write(map[string]any{"jsonrpc": "2.0", "id": s.reqID, "method": method, "params": params})
	return <-ch
}

func (s *fakeSession) serve(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m Msg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			if !s.f.silentParse {
				s.fail(nil, -32700, "parse error")
			}
			continue
		}
		if m.IsResponse() {
			s.mu.Lock()
			ch := s.pending[idKey(m.ID)]
			s.mu.Unlock()
			if ch != nil {
				ch <- m.Result
			}
			continue
		}
		s.wg.Add(1)
		if m.Method == "session/cancel" {
			s.handle(&m) // notifications in order, inline
			continue
		}
		go s.handle(&m)
	}
	s.wg.Wait()
}

func (s *fakeSession) handle(m *Msg) {
	defer s.wg.Done()
	f := s.f
	p := params(m)
	switch m.Method {
	case "initialize":
		var v int
		json.Unmarshal(p["protocolVersion"], &v)
		s.caps = capsOf([]byte(`{"method":"initialize","params":` + string(m.Params) + `}`))
		if !f.echoVersion {
			v = 1
		}
		if f.noise {
			s.mu.Lock()
			io.WriteString(s.w, "fake agent starting\n")
			s.mu.Unlock()
		}
		s.reply(m.ID, map[string]any{"protocolVersion": v, "agentCapabilities": map[string]any{"loadSession": !f.noLoad,
			"sessionCapabilities": map[string]any{"delete": map[string]any{}, "fork": map[string]any{}}},
			"agentInfo": map[string]any{"name": "fake", "version": "1"}})
	case "session/delete":
		s.mu.Lock()
		_, known := s.sessions[str(p["sessionId"])]
		delete(s.sessions, str(p["sessionId"]))
		s.mu.Unlock()
		if !known && f.deleteUnknownFails {
			s.fail(m.ID, CodeNotFound, "no such session")
			return
		}
		s.reply(m.ID, map[string]any{})
	case "session/fork":
		s.mu.Lock()
		t := s.sessions[str(p["sessionId"])]
		if t == nil {
			s.mu.Unlock()
			s.fail(m.ID, CodeNotFound, "no session")
			return
		}
		s.n++
		sid := fmt.Sprintf("s%d", s.n)
		fork := &fakeTurn{cwd: t.cwd}
		if !f.forkEmpty {
			fork.log = append([]json.RawMessage(nil), t.log...)
		}
		s.sessions[sid] = fork
		s.mu.Unlock()
		s.reply(m.ID, map[string]any{"sessionId": sid})
	case "session/new":
		var cwd string
		if json.Unmarshal(p["cwd"], &cwd) != nil || json.Unmarshal(p["mcpServers"], new([]any)) != nil {
			s.fail(m.ID, CodeInvalidParams, "bad params")
			return
		}
		if !strings.HasPrefix(cwd, "/") && !f.acceptRelative {
			s.fail(m.ID, CodeInvalidParams, "cwd must be absolute")
			return
		}
		s.mu.Lock()
		s.n++
		sid := fmt.Sprintf("s%d", s.n)
		s.sessions[sid] = &fakeTurn{cwd: cwd}
		s.mu.Unlock()
		s.reply(m.ID, map[string]any{"sessionId": sid})
	case "session/prompt":
		s.prompt(m, p)
	case "session/cancel":
		s.mu.Lock()
		t := s.sessions[str(p["sessionId"])]
		s.mu.Unlock()
		if t != nil && t.cancel != nil {
			close(t.cancel)
			t.cancel = nil
		}
	case "session/load":
		sid := str(p["sessionId"])
		s.mu.Lock()
		t := s.sessions[sid]
		s.mu.Unlock()
		if t == nil {
			s.fail(m.ID, CodeNotFound, "no session")
			return
		}
		if f.refuseLiveLoad {
			s.fail(m.ID, CodeInvalidParams, "session is already live; close it first")
			return
		}
		for _, raw := range t.log {
			var u map[string]any
			json.Unmarshal(raw, &u)
			if f.replayFailed && u["status"] == "completed" {
				u["status"] = "failed"
			}
			if f.badReplay && u["sessionUpdate"] == "agent_message_chunk" {
				u["content"] = map[string]any{"type": "text", "text": "something else"}
			}
			s.update(sid, u, false)
		}
		s.reply(m.ID, map[string]any{})
	default:
		if !m.IsRequest() {
			if f.answerNotice {
				s.fail(nil, CodeMethodNotFound, "unknown notification")
			}
			return
		}
		if f.unknownMethodOK {
			s.reply(m.ID, map[string]any{})
			return
		}
		s.fail(m.ID, CodeMethodNotFound, "method not found")
	}
}

func (s *fakeSession) prompt(m *Msg, p map[string]json.RawMessage) {
	f := s.f
	sid := str(p["sessionId"])
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(p["prompt"], &blocks) != nil {
		s.fail(m.ID, CodeInvalidParams, "prompt must be an array")
		return
	}
	s.mu.Lock()
	t := s.sessions[sid]
	s.mu.Unlock()
	if t == nil {
		s.fail(m.ID, CodeNotFound, "no session")
		return
	}
	text := ""
	for _, b := range blocks {
		text += b.Text
	}
	chunk := func(s string) map[string]any {
		return map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": s}}
	}
	if strings.HasPrefix(text, "Count") {
		cancel := make(chan struct{})
		s.mu.Lock()
		t.cancel = cancel
		s.mu.Unlock()
		s.update(sid, chunk("1"), true)
		s.update(sid, map[string]any{"sessionUpdate": "tool_call", "toolCallId": "slow", "title": "sleep 100", "name": "bash", "kind": "execute", "status": "pending"}, true)
		// A permission request the user never answers: the client must
		// answer it "cancelled" once it cancels the turn.
		res := s.call("session/request_permission", map[string]any{"sessionId": sid,
			"toolCall": map[string]any{"toolCallId": "slow"},
			"options":  []any{map[string]any{"optionId": "yes", "name": "Allow", "kind": "allow_once"}}})
		var out struct {
			Outcome struct {
				Outcome string `json:"outcome"`
			} `json:"outcome"`
		}
		json.Unmarshal(res, &out)
		if out.Outcome.Outcome != "cancelled" {
			s.reply(m.ID, map[string]any{"stopReason": "end_turn"}) // the turn went on: prompt.cancel must see it
			return
		}
		<-cancel
		s.update(sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "slow", "status": "failed"}, true)
		if f.cancelError {
			s.fail(m.ID, CodeInternal, "context canceled")
			return
		}
		if f.extraCancelReply {
			// Both answers in one write: the suite reads them in one read and
			// records them back to back, so the second is in the trace
			// within the grace however busy the machine is. Two writes left
			// the fake's goroutine a gap the scheduler could stretch past it.
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"stopReason": "cancelled"}})
			s.writeRaw(append(append(append(b, '\n'), b...), '\n'))
			return
		}
		s.reply(m.ID, map[string]any{"stopReason": "cancelled"})
		return
	}
	s.toolTurn(m, sid, t, text)
}

// toolTurn is the main turn: a display terminal, a diff, text around them.
func (s *fakeSession) toolTurn(m *Msg, sid string, t *fakeTurn, text string) {
	f := s.f
	user, _ := json.Marshal(map[string]any{"sessionUpdate": "user_message_chunk", "content": map[string]any{"type": "text", "text": text}})
	s.mu.Lock()
	t.log = append(t.log, user) // replayed on load, never echoed live
	cwd := t.cwd
	s.mu.Unlock()
	chunk := func(s string) map[string]any {
		return map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": s}}
	}
	upd := func(u map[string]any) { s.update(sid, u, true) }
	upd(chunk("Looking."))
	if s.caps.FS || f.alwaysFS {
		s.call("fs/read_text_file", map[string]any{"sessionId": sid, "path": cwd + "/README.md"})
	}
	meta := s.caps.TerminalOutput || f.alwaysMeta
	call := map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls", "name": "bash", "kind": "execute", "status": "in_progress"}
	if f.noName {
		delete(call, "name")
	}
	if s.caps.Notices || f.noticeUnasked {
		s.update(sid, map[string]any{"sessionUpdate": "notice", "severity": "info", "title": "Running ls"}, false)
	}
	if meta {
		call["content"] = []any{map[string]any{"type": "terminal", "terminalId": "t1"}}
		call["_meta"] = map[string]any{"terminal_info": map[string]any{"terminal_id": "t1", "cwd": cwd}}
	}
	upd(call)
	if f.unknownUpdate {
		upd(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "ghost", "status": "completed"})
	}
	output := func() map[string]any {
		return map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1",
			"_meta": map[string]any{"terminal_output": map[string]any{"terminal_id": "t1", "data": "README.md\nmain.go\n"}}}
	}
	done := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "rawOutput": map[string]any{"exit_code": 0}}
	if s.caps.TerminalOutputDelta || f.deltaUnasked {
		upd(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1",
			"_meta": map[string]any{"terminal_output_delta": map[string]any{"terminal_id": "t1", "data": "README.md\n"}}})
	}
	if meta {
		upd(output())
		done["_meta"] = map[string]any{"terminal_exit": map[string]any{"terminal_id": "t1", "exit_code": 0, "signal": nil}}
	} else {
		done["content"] = []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "README.md\nmain.go\n"}}}
	}
	upd(done)
	if f.outputAfterExit && meta {
		upd(output())
	}
	if f.backward {
		upd(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"})
	}
	perm := map[string]any{"toolCallId": "t2", "title": "Write notes.md", "kind": "edit"}
	if f.untitledPermission {
		delete(perm, "title")
	}
	s.call("session/request_permission", map[string]any{"sessionId": sid, "toolCall": perm, "options": []any{
		map[string]any{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
		map[string]any{"optionId": "no", "name": "Reject", "kind": "reject_once"}}})
	path := cwd + "/notes.md"
	if f.relativeDiff {
		path = "notes.md"
	}
	edit := map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Write notes.md", "name": "write", "kind": "edit", "status": "completed",
		"content":   []any{map[string]any{"type": "diff", "path": path, "oldText": nil, "newText": "hi\n"}},
		"locations": []any{map[string]any{"path": cwd + "/notes.md"}}}
	if f.badSchema {
		delete(edit, "title")
	}
	upd(edit)
	upd(chunk("Done."))
	s.reply(m.ID, map[string]any{"stopReason": "end_turn"})
	if f.lateUpdate {
		upd(chunk("Oh, and one more thing."))
	}
}
