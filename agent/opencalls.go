package agent

import (
	"slices"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// openCalls are a session's tool calls without a result, in the order
// made: the fold's one record of which calls are open (state.open, written
// by apply alone). What else follows calls derives from the events or
// keeps what is not this: the call recorder (calls.go) holds the live
// output of the calls it started, the translator (mapping) what each card
// shows, and state.ids every id the log holds (so new ids are unique).
// Which calls the last model response is waiting on (their results enter
// the history) is a flag here, not a second set.
type openCalls []openCall

// openCall is a tool call without a result: carded when its tool/call is in
// the log, else only asked for by the model (a crash came first).
type openCall struct {
	call   session.ToolCall
	carded bool
	// step: the last model response made it and its result is still owed
	// to the model's context; endpoint is the id the endpoint gave it,
	// which the model reads back (the card id differs where the endpoint
	// repeated one).
	step     bool
	endpoint string
}

func (o openCalls) index(id string) int {
	return slices.IndexFunc(o, func(c openCall) bool { return c.call.CallID == id })
}

// respond opens the calls of a model response: they are the step now, and
// the calls of an earlier step that are still open no longer are.
func (o *openCalls) respond(calls []session.MessageCall) {
	for i := range *o {
		(*o)[i].step = false
	}
	for _, c := range calls {
		card := c.Card()
		if i := o.index(card); i >= 0 {
			(*o)[i].step, (*o)[i].endpoint = true, c.ID
			continue
		}
		*o = append(*o, openCall{call: session.ToolCall{CallID: card, Name: c.Name, Args: registry.ArgsJSON(c.Arguments)}, step: true, endpoint: c.ID})
	}
}

// carded records that a call's tool/call is in the log.
func (o *openCalls) carded(p session.ToolCall) {
	if i := o.index(p.CallID); i >= 0 {
		(*o)[i].call, (*o)[i].carded = p, true
		return
	}
	*o = append(*o, openCall{call: p, carded: true})
}

// close takes the call with id out, reporting what it was; ok is false for
// a call not open (answered already, or unknown).
func (o *openCalls) close(id string) (c openCall, ok bool) {
	i := o.index(id)
	if i < 0 {
		return openCall{}, false
	}
	c = (*o)[i]
	*o = slices.Delete(*o, i, i+1)
	return c, true
}

// inStep reports whether the call with id is open and of the step.
func (o openCalls) inStep(id string) bool {
	i := o.index(id)
	return i >= 0 && o[i].step
}

// stepDone reports whether every call of the step has its result.
func (o openCalls) stepDone() bool {
	return !slices.ContainsFunc(o, func(c openCall) bool { return c.step })
}

// dropStep forgets the step: its results will not enter the context (it
// was reset, compacted or refused); the calls stay open.
func (o openCalls) dropStep() {
	for i := range o {
		o[i].step = false
	}
}
