package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/compact"
	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/mcpclient"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/profiles"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/sandbox"
	"github.com/acp-bridge/acp-bridge/session"
)

// conversation is one session: the state folded from its log, and the turn
// loop. What it is and where it runs (sessionEnv), the path of its events
// (timeline.go) and who holds its turn (turnSlot) are parts of their own,
// and so is what it uses besides: the MCP servers (mcp.go), editor file
// access (files.go), permission asking (permission.go), Code Mode
// (codemode.go), the tool calls (calls.go), live output (output.go).
type conversation struct {
	a *Agent
	sessionEnv
	scope   *registry.Scope
	pipe    *pipeline.Pipeline
	files   *Files         // tools' file access and read-tracking (files.go)
	jobs    *jobs.Table    // background commands, ended by close (jobs.go)
	memo    *registry.Memo // tools' short-lived memory: web_fetch's pages
	perm    *permissions   // approval requests and "always" answers (permission.go)
	code    *codeMode      // tools mode and run_code (codemode.go)
	ctl     *controls      // mode, model, tools mode, effort (modes.go)
	meter   *meter         // usage and cost reporting (usage.go)
	prompts *prompts       // the system prompt (prompt.go)
	calls   *callRecorder  // every tool call's events and live output (calls.go)
	subs    *subagents     // profiles, the task tool, launching subagents (subagent.go)
	rw      *rewinder      // rewinds of the conversation and the files (rewind.go)
	policy  *userPolicy    // the user's rules and hooks (policy.go)
	sbx     *sandboxing    // the sandbox of its commands (sandbox.go)

	// timeline is the one path of events: append, fold, translate, send,
	// under its emitMu; the lock order is written there (timeline.go).
	timeline

	// mu guards st and the running turn; taken after emitMu, never before
	// (timeline.go).
	mu  sync.Mutex
	st  *state // changed only by apply, in fold (state.go)
	req reqCache
	turnSlot

	announced *announcer  // the command catalog, before the first turn (commands.go)
	mcp       *mcpServers // the editor's MCP servers (mcp.go)
	room      *room       // when the context needs room (compaction.go)
}

// sessionEnv is what a session is and where it runs, fixed when it is
// made: its id, its roots, and how its client reads it.
type sessionEnv struct {
	id    string
	cwd   string
	roots []string
	caps  acp.ClientCapabilities // snapshotted at creation, so cards and results agree
	v2    bool                   // the client speaks ACP v2 (dialect.go)
	// zeroLines: the client reads card lines 0-based (mapping.ZeroBasedLines
	// of its clientInfo), snapshotted with caps.
	zeroLines bool
	editor    clientKind // whose settings a failure's advice names (failure.go)
}

// turnSlot is who holds the session's one turn: the running turn and the
// prompts queued behind it. The conversation's mu guards it.
type turnSlot struct {
	running bool
	stop    context.CancelCauseFunc
	done    chan struct{} // closed when the running turn ends
	// queued are the prompts that arrived while a turn ran, in order; each
	// is handed the turn when the one before ends (prompt).
	queued []*queuedPrompt
	steer  steering // messages for the running turn (steer.go)
}

// newSession builds a session over lg; replay says whether its translator
// starts by replaying a stored log to the editor (session/load).
func newSession(a *Agent, id string, roots []string, caps acp.ClientCapabilities, lg *session.Log, replay bool) *conversation {
	a.mu.Lock()
	v2 := a.v2
	a.mu.Unlock()
	s := &conversation{a: a, sessionEnv: sessionEnv{id: id, cwd: roots[0], roots: roots, caps: caps, v2: v2},
		scope: a.o.Registry.NewScope()}
	s.sessionID, s.client, s.logger, s.log, s.tools = id, a.client, a.log, lg, s.scope
	s.apply = func(ev session.Event) {
		s.mu.Lock()
		s.st.apply(ev)
		tools := s.st.ctl.tools
		s.mu.Unlock()
		if _, ok := ev.Payload.(session.Controls); ok {
			s.code.set(tools) // the scope's visibility follows the state
		}
	}
	s.files = NewFiles(a.client, id, caps.FS, a.log)
	s.jobs = jobs.New(newJobEvents(s.emit))
	s.memo = &registry.Memo{}
	s.perm = &permissions{id: id, client: permissionClient(a.client, v2), log: a.log, emit: s.emit,
		granted: func(key string) (bool, bool) {
			s.mu.Lock()
			defer s.mu.Unlock()
			allowed, known := s.st.grants[key]
			return allowed, known
		},
		card: func(callID string) (acp.ToolCallUpdate, bool) {
			s.emitMu.Lock()
			defer s.emitMu.Unlock()
			return s.tr.PermissionToolCall(callID)
		}}
	s.st = newState(a.defaultControls(), func(m string) bool { return a.models.Find(m) != nil })
	s.ctl = &controls{a: a, emit: s.emit, booleans: caps.BooleanConfigOptions(), read: func() ctlState {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.st.ctl
	}}
	s.announced = &announcer{emit: s.emit, after: acp.AfterReply}
	s.prompts = &prompts{a: a, id: id, roots: roots, emit: s.emit,
		folded: func() (*session.SystemPrompt, *session.ClientPrompt) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.st.system, s.st.client
		},
		modes: func() []string { return []string{s.ctl.modePrompt(), s.code.prompt()} }}
	s.room = &room{ctl: s.ctl, threshold: a.o.CompactThreshold, folded: func() (ctxSize, int, int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.st.ctx, len(s.st.history), s.st.inTurn
	}}
	s.meter = &meter{ctl: s.ctl, emit: s.emit, window: func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.st.ctx.size
	}, context: func() (int, int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.st.ctx.used, s.st.ctx.size
	}}
	s.calls = newCallRecorder(s.emit)
	s.calls.taken = func(id string) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.st.ids[id]
	}
	s.mcp = newMCPServers(&mcpclient.Servers{Scope: s.scope, Log: a.log.With("session", id),
		ClientName: a.o.Name, ClientVersion: a.o.Version, Bound: a.o.MCPStartTimeout,
		Elicit: s.elicit, ElicitURL: caps.ElicitationMode("url"), ElicitComplete: s.elicitationDone}, s.cwd,
		func(n session.Notice) { s.status(context.Background(), n) })
	a.mu.Lock()
	s.zeroLines = mapping.ZeroBasedLines(a.info)
	s.editor = editorOf(a.info)
	a.mu.Unlock()
	s.policy = newUserPolicy(a.o.Policy, a.o.Settings, id, s.cwd, a.log, policyReport(s.status))
	s.perm.policy = s.policy
	s.perm.seq = func() string { // the running turn's number
		s.mu.Lock()
		defer s.mu.Unlock()
		return fmt.Sprint(s.st.turns)
	}
	s.sbx = &sandboxing{o: a.o.Sandbox, roots: roots, perm: s.perm, report: policyReport(s.status),
		mode:   func() sandbox.Mode { return s.ctl.read().sandbox },
		bypass: func() bool { return s.ctl.mode() == ModeBypass },
		floor:  func() (sandbox.Mode, bool) { return projectSandbox(s.cwd) }}
	s.mcp.sandbox = s.sbx.policy
	s.pipe = pipeline.New(&pipeline.Options{
		Observers: []pipeline.Observer{planObserver(s.emit)},
		Approver:  s.perm,
		// markRunning is outermost: the card turns in_progress once, even
		// when Retry runs the body again; the policy's timeout (innermost,
		// install) bounds each attempt.
		// escalate (sandbox.go) is outside Retry and the timeouts: a
		// command run again outside the sandbox gets its own attempts,
		// and the user's answer is not timed as the command is.
		Middleware: []pipeline.Middleware{s.markRunning, s.sbx.escalate, pipeline.Retry()},
		Logger:     a.log.With("session", id),
	})
	// The user's rules and hooks come first, so a refusal names the rule
	// whatever the mode; the mode gate consults the permissions' gate.
	s.policy.install(s.pipe)
	s.pipe.AddGate(modeGate(s.ctl, s.perm))
	// The scope's own run_code and tools mode: its sub-calls go through
	// the pipeline (policy installed) and the call recorder.
	s.code = newCodeMode(s.scope, a.log.With("session", id), a.o.CodeMode, s.pipe, s.calls, s.st.ctl.tools)
	s.subs = &subagents{reg: a.o.Registry, scope: s.scope, dirs: a.profileDirs(s.cwd), log: a.log.With("session", id),
		status: s.status, models: a.models.Models, pipe: s.pipe, calls: s.calls, prompts: s.prompts, ctl: s.ctl,
		meter: s.meter, files: s.files, jobs: s.jobs, cwd: s.cwd, roots: roots, maxRequests: a.o.MaxTurnRequests,
		rules: s.policy, memo: s.memo}
	builtins, _ := profiles.Load(nil) // no directories: no I/O, no error
	s.subs.install(builtins)
	s.tr = s.newTranslator(replay)
	s.rw = newRewinder(s)
	return s
}

// mappingOptions is how this session's events render for its client.
func (s *conversation) mappingOptions(replay bool) mapping.Options {
	return mapping.Options{Cwd: s.cwd, TerminalOutput: s.caps.TerminalOutput(), Compaction: s.caps.Compaction(), Replay: replay,
		ZeroBasedLines: s.zeroLines, TerminalOutputDelta: s.caps.TerminalOutputDelta(), Notices: s.caps.Notices(),
		BooleanOptions: s.caps.BooleanConfigOptions()}
}

// queuedPrompt is a prompt waiting for the running turn to end. Its
// channel is closed with the turn handed over (running stays true for it),
// or with cancelled set when session/cancel came first.
type queuedPrompt struct {
	ready     chan struct{}
	cancelled bool
}

// cancel stops the running turn, if any, and the prompts queued behind
// it: the user stopped what the agent was doing. It never blocks.
func (s *conversation) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(context.Canceled)
}

// stopLocked cancels the running turn with cause and answers the prompts
// queued behind it as cancelled. The conversation's mu is held.
func (s *turnSlot) stopLocked(cause error) {
	if s.stop != nil {
		s.stop(cause)
	}
	for _, q := range s.queued {
		q.cancelled = true
		close(q.ready)
	}
	s.queued = nil
}

// await waits, when a turn runs, until it is this prompt's turn: a client
// may send a prompt while one runs (codecompanion queues the user's next
// message, the AI SDK provider calls again), and it is answered when its
// own turn ends. It returns with s.mu held and the turn this prompt's, or
// false (s.mu not held) when the prompt was cancelled before it ran.
//
// Either way the prompt has its place once s.mu is taken here, so it tells
// the connection (acp.Admitted): a prompt the client sent after this one
// then queues behind it.
func (s *conversation) await(ctx context.Context) bool {
	s.mu.Lock()
	acp.Admitted(ctx)
	if !s.running {
		return true
	}
	q := &queuedPrompt{ready: make(chan struct{})}
	s.queued = append(s.queued, q)
	s.mu.Unlock()
	select {
	case <-q.ready:
	case <-ctx.Done():
		s.mu.Lock()
		if i := slices.Index(s.queued, q); i >= 0 {
			s.queued = slices.Delete(s.queued, i, i+1)
			s.mu.Unlock()
			return false
		}
		s.mu.Unlock()
		<-q.ready // handed over (or cancelled) meanwhile: take it to pass it on
	}
	s.mu.Lock()
	if q.cancelled {
		s.mu.Unlock()
		return false
	}
	return true
}

// handOver ends the running turn: the next queued prompt gets it, or the
// session is idle. The conversation's mu is held.
func (s *turnSlot) handOver() {
	if len(s.queued) == 0 {
		s.running = false
		return
	}
	next := s.queued[0]
	s.queued = s.queued[1:]
	close(next.ready) // running stays true: the turn is next's
}

// close ends the session, for session/close, session/delete and shutdown
// alike: the running turn is cancelled with cause and waited for, the MCP
// servers are stopped, and the log is closed. registry.ErrShutdown tells
// tools the editor is gone (no grace periods).
func (s *conversation) close(cause error) {
	s.stopTurn(cause)
	s.jobs.Close() // before the log closes: their ends are logged
	s.mcp.stop()
	if err := s.log.Close(); err != nil {
		s.a.log.Info("closing the session log failed", "session", s.id, "err", err) // the failure the user was told of (record)
	}
}

// stopTurn cancels the running turn with cause, and the prompts queued
// behind it, and waits for the turn to finish.
func (s *conversation) stopTurn(cause error) {
	s.mu.Lock()
	s.stopLocked(cause)
	done := s.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
}

// prompt runs one turn to its stop reason, and says what tokens it took
// (nil when the endpoint reported none).
// messageID is the id a v2 client knows the prompt's message by ("" on v1).
func (s *conversation) prompt(ctx context.Context, blocks []acp.ContentBlock, messageID string) (acp.StopReason, *acp.Usage, error) {
	m := s.ctl.model()
	text, images, dropped, err := promptContent(m, blocks)
	if err != nil {
		return "", nil, err
	}
	s.announced.wait(ctx)
	if !s.await(ctx) {
		return acp.StopCancelled, nil, nil
	}
	// The turn ends when the request does ($/cancel_request, the connection
	// closing) or on session/cancel; the cause says which, so tools know
	// whether the editor is still there to see a clean stop.
	tctx, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() { stop(cancelCause(s.a.client)) })
	defer unhook()
	s.running, s.stop, s.done = true, stop, make(chan struct{})
	turn := s.st.turns + 1 // one turn runs at a time: its TurnStart makes it the last
	s.mu.Unlock()
	s.log.SetBusy(true) // a process that would take the session over waits (handover.go)
	s.meter.startTurn()
	defer func() {
		s.mu.Lock()
		s.stop = nil
		close(s.done)
		s.done = nil
		s.handOver()
		idle := !s.running
		s.mu.Unlock()
		if idle {
			s.log.SetBusy(false)
		}
		stop(context.Canceled)
	}()

	raw, _ := json.Marshal(blocks) // the stored form; the fold and the translator read blocks
	s.emit(ctx, session.New(session.UserMessage{Prompt: raw, Text: text, Images: images, Blocks: blocks, MessageID: messageID}))
	acp.Accepted(ctx) // a v2 prompt is answered after its user message
	s.emit(ctx, session.New(session.TurnStart{Turn: turn}))
	if dropped > 0 {
		s.notice(ctx, droppedImagesNotice(m, dropped))
	}
	reason, failure := s.turn(tctx, text) // commands.go: slash commands, else run
	if tctx.Err() != nil {
		reason, failure = acp.StopCancelled, nil
	}
	s.closeOpen(ctx, true, "ABORTED", "tool call aborted", "tool call aborted before it started")
	// Steered messages no model request took stay the user's input: logged
	// after the closed calls, they are in the context of the next turn.
	s.mu.Lock()
	steered := s.steer.end()
	s.mu.Unlock()
	s.joinSteered(ctx, steered)
	end := session.TurnEnd{Turn: turn, StopReason: string(reason)}
	if failure != nil {
		end.Error = failure.Message
	}
	s.emit(ctx, session.New(end))
	usage := s.meter.takeTurn() // still running: no other turn adds to it
	if failure != nil {
		return "", nil, failure // failure.go
	}
	return reason, usage, nil
}

// run is the turn loop: model, tools, results back to the model, until the
// model answers without calling a tool. A failed model request fails the
// turn (failure.go).
func (s *conversation) run(ctx context.Context, text string) (acp.StopReason, *acp.Error) {
	if s.ctl.provider() == nil {
		s.notice(ctx, noModelMessage(s.a.o.ModelHint))
		return acp.StopEndTurn, nil
	}
	// The files may have changed since the last turn (another bridge
	// process remembered an answer, the project's settings were edited).
	s.policy.reload(ctx)
	s.subs.reload(ctx) // the profiles as the files are now, and the task tool that lists them
	if proj, ok := s.policy.untrusted(); ok {
		s.perm.askTrust(ctx, proj)
	}
	blocked, extra := s.policy.promptSubmitted(ctx, text)
	if blocked != "" {
		s.status(ctx, session.Notice{Severity: acp.NoticeWarning, Title: "The prompt was not sent", Description: blocked})
		return acp.StopEndTurn, nil
	}
	// The prompt enters the model's context (state.apply), live and on
	// load, with what UserPromptSubmit hooks added.
	s.emit(ctx, session.New(session.UserContext{Context: extra}))
	s.mu.Lock()
	s.steer.begin() // prompt closes it (steer.go)
	s.mu.Unlock()

	for range s.a.o.MaxTurnRequests {
		// What the user steered since the last request joins here, after
		// the results of the calls it answered.
		s.mu.Lock()
		steered := s.steer.take()
		s.mu.Unlock()
		s.joinSteered(ctx, steered)
		s.keepRoom(ctx) // compaction.go
		msg, finish, err := s.stream(ctx)
		if err != nil && ctx.Err() == nil && isContextWindow(err) && msg.Content == "" && len(msg.ToolCalls) == 0 {
			// The endpoint counts differently from our estimate: make room
			// once and ask again.
			s.room.learn(err)
			req, pol := s.fullRequest(ctx), s.room.policy()
			split := compact.Split(req.Messages[1:], pol.Keep())
			if worthCompacting(req, split, pol) && s.compactContext(ctx, session.CompactOverflow, "", split) == nil {
				msg, finish, err = s.stream(ctx)
			}
		}
		if ctx.Err() != nil {
			// Keep what the user saw, but not calls that never ran: an
			// assistant message whose tool calls have no results is
			// refused by OpenAI-compatible APIs on the next request.
			msg.ToolCalls = nil
			s.commit(msg)
			return acp.StopCancelled, nil
		}
		if err != nil {
			// The editor shows the error (the response): a log line at the
			// default level would be shown again by a client that treats
			// stderr as errors (acp.el).
			s.a.log.Info("model request failed", "session", s.id, "err", err)
			return acp.StopEndTurn, promptError(err, s.editor)
		}
		cards := s.commit(msg)
		if len(msg.ToolCalls) == 0 {
			switch finish {
			case model.FinishLength:
				return acp.StopMaxTokens, nil
			case model.FinishContentFilter:
				// The turn's end drops it from the context (state.apply).
				s.a.log.Info("the model refused; the turn leaves the model's context", "session", s.id)
				return acp.StopRefusal, nil
			}
			s.mu.Lock()
			more := s.steer.more()
			s.mu.Unlock()
			if more {
				continue // the user steered while the model answered: it reads that next
			}
			return acp.StopEndTurn, nil
		}
		// Each result enters the context as it is logged (state.apply).
		calls := slices.Clone(msg.ToolCalls)
		for i := range calls {
			calls[i].ID = cards[i] // the editor's cards and the tool events use the session-unique ids
		}
		results := s.runTools(ctx, calls)
		if ctx.Err() != nil {
			return acp.StopCancelled, nil
		}
		if slices.ContainsFunc(results, func(r registry.Result) bool { return r.EndTurn }) {
			return acp.StopEndTurn, nil // a question waits for the user's next message (tools/question)
		}
		if finish == model.FinishLength {
			return acp.StopMaxTokens, nil
		}
	}
	s.status(ctx, maxTurnNotice(s.a.o.MaxTurnRequests))
	return acp.StopMaxTurnRequests, nil
}

// commit logs a complete model response (applying it adds it to the
// context) and returns its calls' card ids.
func (s *conversation) commit(msg model.Message) []string {
	if msg.Content == "" && msg.Reasoning == "" && len(msg.ToolCalls) == 0 {
		return nil
	}
	wants := make([]string, len(msg.ToolCalls))
	for i, c := range msg.ToolCalls {
		wants[i] = c.ID
	}
	cards := s.calls.ids(wants...)
	s.emit(context.Background(), assistantEvent(msg, cards))
	return cards
}

// stream makes one model request, emitting text and thoughts as they arrive.
func (s *conversation) stream(ctx context.Context) (model.Message, model.Finish, error) {
	req := s.fullRequest(ctx)
	msg := model.Message{Role: model.RoleAssistant}
	var text, thought strings.Builder
	finish := model.FinishStop
	for ev, err := range s.ctl.provider().Stream(ctx, req) {
		if err != nil {
			msg.Content, msg.Reasoning = text.String(), thought.String()
			return msg, "", err
		}
		switch ev.Kind {
		case model.EventText:
			text.WriteString(ev.Text)
			s.emit(ctx, session.New(session.AssistantChunk{Kind: "text", Text: ev.Text}))
		case model.EventThought:
			thought.WriteString(ev.Text)
			s.emit(ctx, session.New(session.AssistantChunk{Kind: "thought", Text: ev.Text}))
		case model.EventToolCall:
			msg.ToolCalls = append(msg.ToolCalls, *ev.ToolCall)
		case model.EventFinish:
			finish = ev.Finish
		case model.EventUsage:
			s.meter.record(ctx, ev.Usage)
		case model.EventRetry:
			// Say so where it stopped. What was shown stands: the retry
			// continues it (model.Retry does not repeat it) or discards it.
			s.status(ctx, retryNotice(ev.Retry))
		case model.EventDiscard:
			text.Reset()
			thought.Reset()
			msg.ToolCalls = nil
			s.emit(ctx, session.New(session.AttemptAbandoned{Note: discardMessage}))
		case model.EventNotice:
			// The endpoint's last word on an answer it ended (model.EventNotice):
			// the user reads it where the answer stopped.
			s.status(ctx, endpointNotice(ev.Text))
		}
	}
	msg.Content, msg.Reasoning = text.String(), thought.String()
	return msg, finish, nil
}

// runTools runs one step's tool calls through the pipeline. Each call is
// logged (its card appears) before any policy runs on it, and results are
// logged in model order; consecutive concurrency-safe calls overlap. The
// session's call recorder (calls.go) logs, coalesces and closes each one.
func (s *conversation) runTools(ctx context.Context, tcs []model.ToolCall) []registry.Result {
	calls := make([]*registry.Call, len(tcs))
	el := formElicitor(s.a.client, s.caps)
	for i, tc := range tcs {
		calls[i] = &registry.Call{ID: tc.ID, Name: tc.Name, Args: registry.ArgsJSON(tc.Arguments), Cwd: s.cwd, Roots: s.roots, Files: s.files, Jobs: s.jobs,
			Ask: askerFor(el, s.id, tc.ID), Rules: s.policy, Memo: s.memo}
	}
	return s.pipe.ExecuteBatch(ctx, s.scope, calls, pipeline.Hooks{
		Logged: func(_ int, c *registry.Call) { s.calls.start(ctx, c) },
		Done:   func(_ int, c *registry.Call, r registry.Result) { s.calls.finish(ctx, c, r) },
	})
}

// markRunning is the outermost middleware: the call passed policy and is
// about to dispatch, so its card moves to in_progress.
func (s *conversation) markRunning(_ *registry.Def, next pipeline.Next) pipeline.Next {
	return func(ctx context.Context, c *registry.Call) registry.Result {
		s.emit(ctx, session.New(session.ToolStatus{CallID: c.ID, Status: "running"}))
		return next(ctx, c)
	}
}

// request is the next model request's messages, tools aside.
func (s *conversation) request(ctx context.Context) *model.Request {
	sys := s.prompts.system(ctx) // takes s.mu itself
	effort := s.ctl.reasoningEffort()
	s.mu.Lock()
	defer s.mu.Unlock()
	return &model.Request{Messages: s.req.messages(sys, s.st.history, s.st.histGen), ReasoningEffort: effort}
}

// reqCache is the last request's messages, the system prompt then the
// history, kept so the next request appends what is new instead of
// copying the whole history again: in a long session that copy was most
// of what a turn allocated, and so most of its garbage collection.
type reqCache struct {
	msgs []model.Message
	sys  string
	gen  uint64
}

// messages returns the system prompt and history as one slice. Each
// caller's slice is clipped to its length, so later appends never write
// inside it; history elements are never changed in place.
func (c *reqCache) messages(sys string, history []model.Message, gen uint64) []model.Message {
	if c.msgs == nil || c.sys != sys || c.gen != gen || len(history) < len(c.msgs)-1 {
		c.msgs = append(make([]model.Message, 0, len(history)+64), model.Message{Role: model.RoleSystem, Content: sys})
		c.msgs = append(c.msgs, history...)
		c.sys, c.gen = sys, gen
	} else {
		c.msgs = append(c.msgs, history[len(c.msgs)-1:]...)
	}
	return slices.Clip(c.msgs)
}

// closeOpen gives every call still without a result a failed one, with
// code and msg; a call the model asked for that never got its card gets
// the card first, failed with never. send as in record.
func (s *conversation) closeOpen(ctx context.Context, send bool, code, msg, never string) int {
	s.mu.Lock()
	open := slices.Clone(s.st.open)
	s.mu.Unlock()
	n := 0
	for _, c := range open {
		text := msg
		if !c.carded {
			s.record(ctx, session.New(c.call), send)
			n++
			text = never
		}
		s.record(ctx, session.New(session.ToolResult{CallID: c.call.CallID, Result: registry.ErrorResult(code, text)}), send)
		n++
	}
	return n
}

func noModelMessage(hint string) string {
	msg := "No model is configured, so this prompt was not sent anywhere.\n\n" +
		"Start acp-bridge with `--model script:FILE` to replay a scripted model (see `acp-bridge demo`)"
	if hint != "" {
		msg += ", or " + hint
	}
	return msg + ". `acp-bridge --help` lists every setting."
}
