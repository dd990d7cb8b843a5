package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/compact"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/catalog"
	"github.com/acp-bridge/acp-bridge/session"
)

// Context that lasts. Before each model request the agent estimates its
// size; past the policy's share of the window it first shortens old tool
// results, and if that is not room enough it has the model summarise the
// older turns and keeps the recent ones verbatim. An endpoint that still
// answers "context length exceeded" gets one compaction and a retry. Every
// change to the context is an event (session.Prune, session.Compaction), so
// the fold of a reloaded log has the same history. These are the planned
// breaks of the prompt cache; between them the history is only appended to.

// ctxSize is what the last usage said of the context: used tokens when
// the history was at tokens at, and the window. Unknown after anything
// that rewrites the history.
type ctxSize struct {
	known    bool
	used     int
	size, at int
}

// applyCompaction folds a compaction's events: only a completed one
// changes the context.
func (st *state) applyCompaction(p session.Compaction) {
	switch p.Status {
	case session.CompactionInProgress:
		st.compactions++
	case session.CompactionCompleted:
		kept := min(max(p.Kept, 0), len(st.history))
		if kept == 0 {
			st.open.dropStep()
			st.extra = nil
		}
		st.history = compact.Replace(p.Summary, slices.Clone(st.history[len(st.history)-kept:]))
		st.ctx = ctxSize{}
	}
}

// room decides when the context needs making room for: the policy for
// the session's model, the estimate of a request's size, and what the
// live session learned that is not history: the window an endpoint named
// when it refused a request, and the turn in which an automatic
// compaction failed (no second try in the same turn: the request may well
// fit, and a failing endpoint would be asked twice per step).
type room struct {
	ctl       *controls
	threshold float64 // Options.CompactThreshold
	// folded reads the folded state: the last usage, the history's length
	// and the running turn.
	folded func() (c ctxSize, history, turn int)

	// window and failedTurn are what the turns learned. Only the running
	// turn reads or writes them, and one turn runs at a time, handed on
	// under the conversation's mu (prompt), so they need no lock.
	window     int
	failedTurn int
}

// policy is the compaction policy for the current model: the window from
// the configuration, else the one the endpoint reports with usage, else the
// default; narrowed to what an endpoint said when it refused a request.
func (r *room) policy() compact.Policy {
	c, _, _ := r.folded()
	size := catalog.Window(r.ctl.model(), c.size)
	if w := r.window; w > 0 && w < size {
		size = w
	}
	return compact.Policy{Window: size, Threshold: r.threshold}
}

// windowInError reads the window from the usual wording of a refusal
// ("maximum context length is 65536 tokens"), 0 when it names none.
// Compiled at the first refusal, not at start-up (56 allocations before
// initialize is answered, for what most sessions never see).
var windowInError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:maximum context length|context window|context size) (?:is|of) (\d+)`)
})

// learn keeps the window an endpoint's refusal names, the smallest seen.
func (r *room) learn(err error) {
	m := windowInError().FindStringSubmatch(err.Error())
	if m == nil {
		return
	}
	if n, convErr := strconv.Atoi(m[1]); convErr == nil && n > 0 {
		if r.window == 0 || n < r.window {
			r.window = n
		}
	}
}

// estimate is the size of req in tokens: the last reported usage plus what
// was added since, or a count of characters when no usage applies.
func (r *room) estimate(req *model.Request) int {
	c, n, _ := r.folded()
	msgs := req.Messages[1:] // the history, after the system message
	if c.known && c.at <= n && len(msgs) == n {
		tail := msgs[c.at:]
		if len(tail) > 0 && tail[0].Role == model.RoleAssistant {
			tail = tail[1:] // the answer to that request: counted as its output
		}
		return c.used + compact.Tokens(tail)
	}
	tools := 0
	for _, t := range req.Tools {
		tools += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return compact.Tokens(req.Messages) + tools/4
}

// automatic reports whether an automatic compaction may run now, and the
// running turn: not when it is off, nor again in a turn where one failed.
func (r *room) automatic() (turn int, ok bool) {
	if r.threshold < 0 || r.ctl.read().manualCompact {
		return 0, false // automatic compaction is off (configured, or the session's switch)
	}
	_, _, turn = r.folded()
	return turn, r.failedTurn != turn
}

// failed marks turn as one whose automatic compaction failed.
func (r *room) failed(turn int) {
	r.failedTurn = turn
}

// fullRequest is the next model request, tools included.
func (s *conversation) fullRequest(ctx context.Context) *model.Request {
	req := s.request(ctx)
	// Schemas is the one visibility function: what the model is offered is
	// what Resolve lets run (in code mode, only run_code).
	for _, d := range s.scope.Schemas() {
		req.Tools = append(req.Tools, model.ToolSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	return req
}

// keepRoom makes room before a request that would pass the threshold:
// shortening old tool results when that is enough, else a compaction. It
// reports whether it changed the context.
func (s *conversation) keepRoom(ctx context.Context) bool {
	turn, ok := s.room.automatic()
	if !ok {
		return false
	}
	pol := s.room.policy()
	req := s.fullRequest(ctx)
	est := s.room.estimate(req)
	if !pol.Over(est) {
		return false
	}
	hist := req.Messages[1:]
	split := compact.Split(hist, pol.Keep())
	if !worthCompacting(req, split, pol) {
		return false
	}
	// Shortening old tool results is cheaper than a summary and loses
	// less; it is enough when it brings the request well under the limit
	// (or the next request would be back here at once).
	if pruned, n := compact.Prune(hist, split, compact.DefaultPruneChars); n > 0 {
		after := est - (compact.Tokens(hist) - compact.Tokens(pruned))
		if after <= pol.Limit()*3/4 {
			s.emit(ctx, session.New(session.Prune{Before: split, MaxChars: compact.DefaultPruneChars, Count: n}))
			s.reportContext(ctx, nil)
			return true
		}
	}
	if err := s.compactContext(ctx, session.CompactThreshold, "", split); err != nil {
		s.room.failed(turn)
		return false
	}
	return true
}

// worthCompacting reports whether summarising the messages before split
// can bring req under the limit: not when there are none, nor when what
// would stay (the system message, the tools and the recent messages, say a
// huge paste) fills the window by itself. The endpoint then has the last
// word.
func worthCompacting(req *model.Request, split int, pol compact.Policy) bool {
	if split <= 0 {
		return false
	}
	stay := compact.Tokens(req.Messages[:1]) + compact.Tokens(req.Messages[1+split:])
	for _, t := range req.Tools {
		stay += (len(t.Name) + len(t.Description) + len(t.Parameters)) / 4
	}
	return stay <= pol.Limit()
}

// errNothingToCompact: the context is empty.
var errNothingToCompact = errors.New("nothing to compact: the context is empty")

// compactContext has the model summarise the first split messages of the
// context and replaces them with the summary; the rest stay as they were.
// Its progress is logged (and shown) as one compaction; on failure or
// cancellation the context is unchanged.
func (s *conversation) compactContext(ctx context.Context, reason, focus string, split int) error {
	p := s.ctl.provider()
	if p == nil {
		return errors.New("no model is configured")
	}
	req := s.fullRequest(ctx)
	hist := req.Messages[1:]
	split = min(split, len(hist))
	if split <= 0 {
		return errNothingToCompact
	}
	s.mu.Lock()
	id := fmt.Sprintf("compaction-%d", s.st.compactions+1)
	s.mu.Unlock()
	s.emit(ctx, session.New(session.Compaction{ID: id, Status: session.CompactionInProgress, Reason: reason}))

	// The summary request starts like the requests before it (the same
	// system message and tools, the same first messages), so it is a
	// prefix-cache hit too; only the instruction at the end is new.
	sreq := compact.Request(req.Messages[0].Content, hist[:split], focus)
	sreq.Tools = req.Tools
	summary, usage, err := s.summarise(ctx, p, sreq, id)
	if err != nil && ctx.Err() == nil && isContextWindow(err) {
		// The old part alone is too long: shorten its tool results hard and try once more.
		short, _ := compact.Prune(hist[:split], split, compact.DefaultPruneChars/8)
		sreq = compact.Request(req.Messages[0].Content, short, focus)
		sreq.Tools = req.Tools
		summary, usage, err = s.summarise(ctx, p, sreq, id)
	}
	switch {
	case ctx.Err() != nil:
		s.emit(ctx, session.New(session.Compaction{ID: id, Status: session.CompactionCancelled, Reason: reason}))
		s.reportContext(ctx, usage)
		return ctx.Err()
	case err == nil && summary == "":
		err = errors.New("the model returned no summary")
	}
	if err != nil {
		s.emit(ctx, session.New(session.Compaction{ID: id, Status: session.CompactionFailed, Reason: reason, Error: err.Error()}))
		s.reportContext(ctx, usage)
		return err
	}
	s.emit(ctx, session.New(session.Compaction{ID: id, Status: session.CompactionCompleted, Reason: reason,
		Summary: summary, Kept: len(hist) - split, Replaced: split}))
	s.reportContext(ctx, usage)
	return nil
}

// summarise streams the summary, each piece logged as it arrives.
func (s *conversation) summarise(ctx context.Context, p model.Provider, req *model.Request, id string) (string, *model.Usage, error) {
	var (
		text  strings.Builder
		usage *model.Usage
	)
	for ev, err := range p.Stream(ctx, req) {
		if err != nil {
			return "", usage, err
		}
		switch ev.Kind {
		case model.EventText:
			text.WriteString(ev.Text)
			s.emit(ctx, session.New(session.CompactionChunk{ID: id, Text: ev.Text}))
		case model.EventUsage:
			usage = ev.Usage
		case model.EventRetry:
			// What streamed stands: the retry continues it (model.Retry
			// does not repeat it) or discards it.
			s.status(ctx, retryNotice(ev.Retry))
		case model.EventDiscard:
			text.Reset()
		}
	}
	return strings.TrimSpace(text.String()), usage, nil
}

// reportContext logs the context's size after it changed (an estimate:
// no request has measured it yet), and the cost of the summary request u
// when there was one, so the editor's meter and bill follow.
func (s *conversation) reportContext(ctx context.Context, u *model.Usage) {
	ev := s.meter.event(u)
	ev.Used = s.room.estimate(s.fullRequest(ctx))
	ev.InputTokens, ev.OutputTokens, ev.Estimated = 0, 0, true
	s.emit(ctx, session.New(ev))
}

func isContextWindow(err error) bool {
	var me *model.Error
	return errors.As(err, &me) && me.Kind == model.ErrContextWindow
}
