package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// Session is one conversation: its log, its tools and its running turn.
type Session struct {
	a     *Agent
	id    string
	cwd   string
	roots []string
	caps  acp.ClientCapabilities // snapshotted at creation, so cards and results agree
	scope *registry.Scope
	pipe  *pipeline.Pipeline
	files *Files    // tools' file access and read-tracking (files.go)
	code  *codeMode // tools mode and run_code (codemode.go)

	// emitMu orders events: one append and its updates at a time, so the
	// log order is the wire order.
	emitMu     sync.Mutex
	log        *session.Log
	tr         *mapping.Translator
	saveFailed bool // the log could not be written; the user was told (emit)

	mu      sync.Mutex
	running bool
	stop    context.CancelCauseFunc
	done    chan struct{} // closed when the running turn ends
	turns   int
	history []model.Message
	perms   permissions

	ctl   controls      // mode, model, title, usage (modes.go, usage.go)
	ready chan struct{} // closed once the session is announced (commands.go)
	mcp   mcpServers    // the editor's MCP servers (mcp.go)
}

func newSession(a *Agent, id string, roots []string, caps acp.ClientCapabilities) *Session {
	s := &Session{a: a, id: id, cwd: roots[0], roots: roots, caps: caps,
		scope: a.o.Registry.NewScope(), log: session.NewLog(a.o.Now)}
	s.files = NewFiles(a.client, id, caps.FS, a.log)
	s.code = newCodeMode(s) // the scope's own run_code and tools mode
	s.tr = mapping.New(s.scope, mapping.Options{Cwd: s.cwd, TerminalOutput: caps.TerminalOutput()})
	s.initControls()
	s.pipe = pipeline.New(&pipeline.Options{
		Gates:     []pipeline.Gate{s.modeGate}, // modeGate consults permissionGate
		Observers: []pipeline.Observer{s.observePlan},
		Approver:  s,
		// markRunning is outermost: the card turns in_progress once, even
		// when Retry runs the body again; Timeout bounds each attempt.
		Middleware: []pipeline.Middleware{s.markRunning, pipeline.Retry(), pipeline.Timeout()},
		Logger:     a.log.With("session", id),
	})
	return s
}

// emit appends an event and sends its updates. Updates are written with a
// context that outlives a cancelled turn: final card updates must still go out.
func (s *Session) emit(ctx context.Context, ev session.Event) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	ev = s.log.Append(ev)
	updates := s.tr.Translate(ev)
	if !s.saveFailed {
		if err := s.log.Err(); err != nil {
			// The disk filled up (or went away): say so once, where the
			// user looks; the session goes on in memory.
			s.saveFailed = true
			n := s.log.Append(session.New(session.TypeNotice, session.Notice{Text: fmt.Sprintf(
				"\n\n[This session is no longer being saved (%v); it goes on in memory, but session/load will not have what follows.]\n\n", err)}))
			updates = append(updates, s.tr.Translate(n)...)
		}
	}
	for _, u := range updates {
		if err := s.a.client.SessionUpdate(context.WithoutCancel(ctx), s.id, u); err != nil {
			s.a.log.Debug("session/update not delivered", "session", s.id, "err", err)
		}
	}
}

func (s *Session) notice(ctx context.Context, text string) {
	s.emit(ctx, session.New(session.TypeNotice, session.Notice{Text: text}))
}

// cancel stops the running turn, if any. It never blocks.
func (s *Session) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		s.stop(context.Canceled)
	}
}

// close cancels the running turn and waits for it to finish.
func (s *Session) close() { s.closeWith(context.Canceled) }

// closeWith cancels the running turn with cause and waits for it to finish.
// registry.ErrShutdown tells tools the editor is gone (no grace periods).
func (s *Session) closeWith(cause error) {
	s.mu.Lock()
	if s.stop != nil {
		s.stop(cause)
	}
	done := s.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
}

// prompt runs one turn to its stop reason.
func (s *Session) prompt(ctx context.Context, blocks []acp.ContentBlock) (acp.StopReason, error) {
	text, images, err := s.promptContent(blocks)
	if err != nil {
		return "", err
	}
	s.awaitAnnounced(ctx)
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return "", acp.InvalidParams("invalid params: a prompt is already running in session %s; cancel it first", s.id)
	}
	// The turn ends when the request does ($/cancel_request, the connection
	// closing) or on session/cancel; the cause says which, so tools know
	// whether the editor is still there to see a clean stop.
	tctx, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() { stop(s.a.cancelCause()) })
	defer unhook()
	s.running, s.stop, s.done = true, stop, make(chan struct{})
	s.turns++
	turn := s.turns
	s.ctl.mu.Lock()
	s.ctl.images = images
	s.ctl.mu.Unlock()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running, s.stop = false, nil
		close(s.done)
		s.done = nil
		s.mu.Unlock()
		stop(context.Canceled)
	}()

	raw, _ := json.Marshal(blocks)
	s.emit(ctx, session.New(session.TypeUserMessage, session.UserMessage{Prompt: raw, Text: text}))
	s.emit(ctx, session.New(session.TypeTurnStart, session.TurnStart{Turn: turn}))
	reason := s.turn(tctx, text) // commands.go: slash commands, else run
	if tctx.Err() != nil {
		reason = acp.StopCancelled
	}
	s.failUnfinished(ctx)
	s.emit(ctx, session.New(session.TypeTurnEnd, session.TurnEnd{Turn: turn, StopReason: string(reason)}))
	return reason, nil
}

// run is the turn loop: model, tools, results back to the model, until the
// model answers without calling a tool.
func (s *Session) run(ctx context.Context, text string) acp.StopReason {
	if s.provider() == nil {
		s.notice(ctx, noModelMessage(s.a.o.ModelHint))
		return acp.StopEndTurn
	}
	s.mu.Lock()
	s.history = append(s.history, model.Message{Role: model.RoleUser, Content: text, Images: s.takeImages()})
	s.mu.Unlock()
	s.emit(ctx, session.New(session.TypeUserContext, session.UserContext{})) // load.go rebuilds from it

	for range s.a.o.MaxTurnRequests {
		msg, finish, err := s.stream(ctx)
		if ctx.Err() != nil {
			// Keep what the user saw, but not calls that never ran: an
			// assistant message whose tool calls have no results is
			// refused by OpenAI-compatible APIs on the next request.
			msg.ToolCalls = nil
			s.commit(msg)
			return acp.StopCancelled
		}
		if err != nil {
			s.a.log.Warn("model request failed", "session", s.id, "err", err)
			s.notice(ctx, fmt.Sprintf("\n\n[Model request failed: %v]\n\n", err))
			return acp.StopEndTurn
		}
		s.commit(msg)
		if len(msg.ToolCalls) == 0 {
			switch finish {
			case model.FinishLength:
				return acp.StopMaxTokens
			case model.FinishContentFilter:
				return acp.StopRefusal
			}
			return acp.StopEndTurn
		}
		results := s.runTools(ctx, msg.ToolCalls)
		s.mu.Lock()
		var extra []string
		for i, tc := range msg.ToolCalls {
			s.history = append(s.history, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: results[i].Text()})
			extra = append(extra, results[i].Context...)
		}
		// Additional context from post-execute policy follows the results,
		// so every tool message stays next to the call it answers.
		if len(extra) > 0 {
			s.history = append(s.history, model.Message{Role: model.RoleUser, Content: strings.Join(extra, "\n\n")})
		}
		s.mu.Unlock()
		if ctx.Err() != nil {
			return acp.StopCancelled
		}
		if finish == model.FinishLength {
			return acp.StopMaxTokens
		}
	}
	return acp.StopMaxTurnRequests
}

func (s *Session) commit(msg model.Message) {
	if msg.Content == "" && msg.Reasoning == "" && len(msg.ToolCalls) == 0 {
		return
	}
	s.mu.Lock()
	s.history = append(s.history, msg)
	s.mu.Unlock()
	// The log keeps the response whole, so a load rebuilds this history (load.go).
	s.emit(context.Background(), assistantEvent(msg))
}

// stream makes one model request, emitting text and thoughts as they arrive.
func (s *Session) stream(ctx context.Context) (model.Message, model.Finish, error) {
	s.mu.Lock()
	req := &model.Request{Messages: append([]model.Message{{Role: model.RoleSystem, Content: s.systemPrompt() + s.codePrompt()}}, s.history...)}
	s.mu.Unlock()
	// Schemas is the one visibility function: what the model is offered is
	// what Resolve lets run (in code mode, only run_code).
	for _, d := range s.scope.Schemas() {
		req.Tools = append(req.Tools, model.ToolSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	msg := model.Message{Role: model.RoleAssistant}
	var text, thought strings.Builder
	finish := model.FinishStop
	for ev, err := range s.provider().Stream(ctx, req) {
		if err != nil {
			msg.Content, msg.Reasoning = text.String(), thought.String()
			return msg, "", err
		}
		switch ev.Kind {
		case model.EventText:
			text.WriteString(ev.Text)
			s.emit(ctx, session.New(session.TypeAssistantChunk, session.AssistantChunk{Kind: "text", Text: ev.Text}))
		case model.EventThought:
			thought.WriteString(ev.Text)
			s.emit(ctx, session.New(session.TypeAssistantChunk, session.AssistantChunk{Kind: "thought", Text: ev.Text}))
		case model.EventToolCall:
			msg.ToolCalls = append(msg.ToolCalls, *ev.ToolCall)
		case model.EventFinish:
			finish = ev.Finish
		case model.EventUsage:
			s.recordUsage(ctx, ev.Usage)
		case model.EventRetry:
			// Say so where it stopped. What was shown stands: the retry
			// continues it (model.Retry does not repeat it) or discards it.
			s.notice(ctx, retryMessage(ev.Retry))
		case model.EventDiscard:
			text.Reset()
			thought.Reset()
			msg.ToolCalls = nil
			s.notice(ctx, discardMessage)
		}
	}
	msg.Content, msg.Reasoning = text.String(), thought.String()
	return msg, finish, nil
}

// runTools runs one step's tool calls through the pipeline. Each call is
// logged (its card appears) before any policy runs on it, and results are
// logged in model order; consecutive concurrency-safe calls overlap. Live
// output is coalesced per call and flushed before its result is logged.
func (s *Session) runTools(ctx context.Context, tcs []model.ToolCall) []registry.Result {
	calls := make([]*registry.Call, len(tcs))
	outs := make([]*outputCoalescer, len(tcs))
	for i, tc := range tcs {
		args := tc.Arguments
		if !json.Valid(args) {
			// A model's broken JSON is kept as a JSON string, so the log
			// stays valid and validation fails the call as INVALID_ARGS.
			args, _ = json.Marshal(string(args))
		}
		calls[i] = &registry.Call{ID: tc.ID, Name: tc.Name, Args: args, Cwd: s.cwd, Roots: s.roots, Files: s.files}
		outs[i] = s.liveOutput(ctx, tc.ID)
		calls[i].Output = outs[i].Write
	}
	return s.pipe.ExecuteBatch(ctx, s.scope, calls, pipeline.Hooks{
		Logged: func(_ int, c *registry.Call) {
			s.emit(ctx, session.New(session.TypeToolCall, session.ToolCall{CallID: c.ID, Name: c.Name, Args: c.Args}))
		},
		Done: func(i int, c *registry.Call, r registry.Result) {
			outs[i].Close()
			s.emit(ctx, session.New(session.TypeToolResult, session.ToolResult{CallID: c.ID, Result: r}))
		},
	})
}

// markRunning is the outermost middleware: the call passed policy and is
// about to dispatch, so its card moves to in_progress.
func (s *Session) markRunning(_ *registry.Def, next pipeline.Next) pipeline.Next {
	return func(ctx context.Context, c *registry.Call) registry.Result {
		s.emit(ctx, session.New(session.TypeToolStatus, session.ToolStatus{CallID: c.ID, Status: "running"}))
		return next(ctx, c)
	}
}

// permissionGate asks the user about calls whose tool wants approval.
func (s *Session) permissionGate(_ context.Context, d *registry.Def, c *registry.Call) pipeline.Decision {
	if p := d.Permission(c); p != nil {
		return pipeline.Decision{Kind: pipeline.Ask, Reason: p.Reason}
	}
	return pipeline.Decision{Kind: pipeline.Allow}
}

// failUnfinished gives every card still open a final failed update.
func (s *Session) failUnfinished(ctx context.Context) {
	s.emitMu.Lock()
	ids := s.tr.Unfinished()
	s.emitMu.Unlock()
	for _, id := range ids {
		s.emit(ctx, session.New(session.TypeToolResult, session.ToolResult{CallID: id,
			Result: registry.ErrorResult("ABORTED", "tool call aborted")}))
	}
}

func (s *Session) systemPrompt() string {
	return "You are acp-bridge, a coding agent working inside the user's editor. " +
		"The workspace root is " + s.cwd + "; relative paths resolve against it. " +
		"Use the tools to inspect and change the workspace, and answer concisely in Markdown." + s.modePrompt()
}

func noModelMessage(hint string) string {
	msg := "No model is configured, so this prompt was not sent anywhere.\n\n" +
		"Start acp-bridge with `--model script:FILE` to replay a scripted model (see `acp-bridge demo`)"
	if hint != "" {
		msg += ", or " + hint
	}
	return msg + ". `acp-bridge --help` lists every setting."
}
