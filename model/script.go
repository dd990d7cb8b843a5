package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"time"
)

// Script is a file of model responses replayed in order, one per request: an
// offline, deterministic model for tests and the demo.
//
//	{"responses": [
//	  {"parts": [{"thought": "Look first."}, {"text": "Reading it."},
//	             {"tool_call": {"name": "read", "arguments": {"file_path": "go.mod"}}}],
//	   "finish": "tool_calls"},
//	  {"parts": [{"delay_ms": 50}, {"text": "Done."}]}
//	]}
//
// Text and thoughts stream in chunks of ChunkSize bytes (default: word by
// word), each after ChunkDelayMS. A part {"error": "..."} fails the request
// at that point, as a broken connection would. Finish defaults to
// "tool_calls" when the response calls tools, else "stop".
type Script struct {
	Responses []ScriptResponse `json:"responses"`

	mu   sync.Mutex
	next int
	ids  int
}

// ScriptResponse is one scripted model response.
type ScriptResponse struct {
	Parts        []ScriptPart `json:"parts"`
	Finish       Finish       `json:"finish,omitempty"`
	ChunkSize    int          `json:"chunk_size,omitempty"`
	ChunkDelayMS int          `json:"chunk_delay_ms,omitempty"`
	Usage        *Usage       `json:"usage,omitempty"`
}

// ScriptPart is one step of a response; exactly one field is set.
type ScriptPart struct {
	Text     string          `json:"text,omitempty"`
	Thought  string          `json:"thought,omitempty"`
	ToolCall *ScriptToolCall `json:"tool_call,omitempty"`
	DelayMS  int             `json:"delay_ms,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// ScriptToolCall is a scripted call; ID defaults to call_<n>.
type ScriptToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScript(b)
}

// ParseScript decodes a script, rejecting unknown fields so typos surface.
func ParseScript(b []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("model script: %w", err)
	}
	for i, r := range s.Responses {
		for j, p := range r.Parts {
			n := 0
			for _, set := range []bool{p.Text != "", p.Thought != "", p.ToolCall != nil, p.DelayMS > 0, p.Error != ""} {
				if set {
					n++
				}
			}
			if n != 1 {
				return nil, fmt.Errorf("model script: response %d part %d: set exactly one of text, thought, tool_call, delay_ms, error", i+1, j+1)
			}
			if p.ToolCall != nil && p.ToolCall.Name == "" {
				return nil, fmt.Errorf("model script: response %d part %d: tool_call without a name", i+1, j+1)
			}
		}
	}
	return &s, nil
}

// ErrScriptExhausted is returned when every scripted response has been used.
var ErrScriptExhausted = errors.New("the model script has no more responses")

// Stream replays the next response.
func (s *Script) Stream(ctx context.Context, _ *Request) iter.Seq2[Event, error] {
	s.mu.Lock()
	if s.next >= len(s.Responses) {
		s.mu.Unlock()
		return func(yield func(Event, error) bool) { yield(Event{}, ErrScriptExhausted) }
	}
	r := s.Responses[s.next]
	s.next++
	// Assign call ids now so they are stable whatever the consumer does.
	calls := map[int]ToolCall{}
	for i, p := range r.Parts {
		if p.ToolCall != nil {
			s.ids++
			id := p.ToolCall.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", s.ids)
			}
			args := p.ToolCall.Arguments
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			calls[i] = ToolCall{ID: id, Name: p.ToolCall.Name, Arguments: args}
		}
	}
	s.mu.Unlock()

	return func(yield func(Event, error) bool) {
		sleep := func(ms int) bool {
			if ms <= 0 {
				return ctx.Err() == nil
			}
			t := time.NewTimer(time.Duration(ms) * time.Millisecond)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return false
			case <-t.C:
				return true
			}
		}
		for i, p := range r.Parts {
			switch {
			case p.DelayMS > 0:
				if !sleep(p.DelayMS) {
					yield(Event{}, ctx.Err())
					return
				}
			case p.Error != "":
				yield(Event{}, errors.New(p.Error))
				return
			case p.ToolCall != nil:
				c := calls[i]
				if !yield(Event{Kind: EventToolCall, ToolCall: &c}, nil) {
					return
				}
			default:
				kind, text := EventText, p.Text
				if p.Thought != "" {
					kind, text = EventThought, p.Thought
				}
				for _, chunk := range chunks(text, r.ChunkSize) {
					if !sleep(r.ChunkDelayMS) {
						yield(Event{}, ctx.Err())
						return
					}
					if !yield(Event{Kind: kind, Text: chunk}, nil) {
						return
					}
				}
			}
		}
		if r.Usage != nil {
			u := *r.Usage
			if !yield(Event{Kind: EventUsage, Usage: &u}, nil) {
				return
			}
		}
		fin := r.Finish
		if fin == "" {
			fin = FinishStop
			if len(calls) > 0 {
				fin = FinishToolCalls
			}
		}
		yield(Event{Kind: EventFinish, Finish: fin}, nil)
	}
}

// chunks splits text into pieces of size bytes (on rune boundaries), or
// after each run of spaces when size is 0, so text streams as a model's would.
func chunks(text string, size int) []string {
	var out []string
	if size <= 0 {
		for len(text) > 0 {
			i := strings.IndexByte(text, ' ')
			if i < 0 {
				out = append(out, text)
				break
			}
			for i < len(text) && text[i] == ' ' {
				i++
			}
			out = append(out, text[:i])
			text = text[i:]
		}
		return out
	}
	for len(text) > 0 {
		n := min(size, len(text))
		for n < len(text) && !utf8RuneStart(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
