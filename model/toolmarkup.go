package model

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Tool calls written as text. Endpoints meet them two ways:
//
//   - an endpoint that validates calls rejects one it cannot parse and
//     quotes what the model wrote (Groq: an error with code
//     "tool_use_failed" and "failed_generation"): rejectedCall;
//   - a server without a tool parser for the model (llama.cpp, vLLM without
//     --tool-call-parser) passes the model's call markup through as text:
//     leakedCalls.
//
// The forms seen: Hermes and Qwen2.5 (<tool_call>{"name","arguments"}
// </tool_call>), Qwen3-Coder's XML (<tool_call><function=NAME>
// <parameter=P>V</parameter></function></tool_call>), Llama's and Groq's
// <function=NAME>{ARGS}</function>, Granite's and Phi's <|tool_call|>[…],
// and bare JSON ({"name","arguments"} or a list of them).

// Compiled at first use, not at start-up: most sessions never see markup.
var (
	functionTag  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<function=([A-Za-z0-9_.:\-]+)>?`) })
	parameterTag = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)<parameter=([A-Za-z0-9_.:\-]+)>\n?(.*?)\n?</parameter>`)
	})
)

// markupCall is one call read from markup: its name and its arguments as
// JSON text.
type markupCall struct {
	Name      string
	Arguments json.RawMessage
}

// jsonCall is the JSON form of a call: {"name", "arguments"} (or
// "parameters"), arguments an object or a string holding one.
type jsonCall struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
}

func (j jsonCall) call() (markupCall, bool) {
	if j.Name == "" {
		return markupCall{}, false
	}
	args := j.Arguments
	if len(args) == 0 {
		args = j.Parameters
	}
	var s string
	if json.Unmarshal(args, &s) == nil {
		args = json.RawMessage(s) // arguments as a JSON string, OpenAI style
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return markupCall{}, false
	}
	return markupCall{Name: j.Name, Arguments: args}, true
}

// parseJSONCalls reads one call object or a list of them.
func parseJSONCalls(s string) ([]markupCall, bool) {
	s = strings.TrimSpace(s)
	var list []jsonCall
	if strings.HasPrefix(s, "[") {
		if json.Unmarshal([]byte(s), &list) != nil {
			return nil, false
		}
	} else {
		var one jsonCall
		if json.Unmarshal([]byte(s), &one) != nil {
			return nil, false
		}
		list = []jsonCall{one}
	}
	var out []markupCall
	for _, j := range list {
		c, ok := j.call()
		if !ok {
			return nil, false
		}
		out = append(out, c)
	}
	return out, len(out) > 0
}

// parseFunctionTag reads <function=NAME> followed by a JSON object of
// arguments or by <parameter=…> elements.
func parseFunctionTag(s string) (markupCall, bool) {
	m := functionTag().FindStringSubmatchIndex(s)
	if m == nil {
		return markupCall{}, false
	}
	c := markupCall{Name: s[m[2]:m[3]]}
	body := s[m[1]:]
	if end := strings.Index(body, "</function>"); end >= 0 {
		body = body[:end]
	}
	if params := parameterTag().FindAllStringSubmatch(body, -1); len(params) > 0 {
		args := map[string]any{}
		for _, p := range params {
			var v any
			if json.Unmarshal([]byte(strings.TrimSpace(p[2])), &v) == nil {
				args[p[1]] = v // numbers, booleans, objects as they were meant
			} else {
				args[p[1]] = p[2]
			}
		}
		c.Arguments, _ = json.Marshal(args)
		return c, true
	}
	body = strings.TrimSpace(body)
	switch {
	case body == "":
		c.Arguments = json.RawMessage("{}")
	case json.Valid([]byte(body)):
		c.Arguments = json.RawMessage(body)
	default:
		return markupCall{}, false
	}
	return c, true
}

// parseMarkup reads the calls in text that is tool-call markup and nothing
// else (blank space aside).
func parseMarkup(text string) ([]markupCall, bool) {
	t := strings.TrimSpace(text)
	var out []markupCall
	switch {
	case strings.HasPrefix(t, "<tool_call>"):
		for t != "" {
			if !strings.HasPrefix(t, "<tool_call>") {
				return nil, false
			}
			t = strings.TrimPrefix(t, "<tool_call>")
			end := strings.Index(t, "</tool_call>")
			body := t
			if end >= 0 {
				body, t = t[:end], strings.TrimSpace(t[end+len("</tool_call>"):])
			} else {
				t = "" // the model stopped before closing it
			}
			calls, ok := parseJSONCalls(body)
			if !ok {
				c, ok := parseFunctionTag(body)
				if !ok {
					return nil, false
				}
				calls = []markupCall{c}
			}
			out = append(out, calls...)
		}
	case strings.HasPrefix(t, "<|tool_call|>"):
		calls, ok := parseJSONCalls(strings.TrimSuffix(strings.TrimPrefix(t, "<|tool_call|>"), "<|/tool_call|>"))
		if !ok {
			return nil, false
		}
		out = calls
	case strings.HasPrefix(t, "<function="):
		for t != "" {
			c, ok := parseFunctionTag(t)
			if !ok {
				return nil, false
			}
			out = append(out, c)
			end := strings.Index(t, "</function>")
			if end < 0 {
				break
			}
			t = strings.TrimSpace(t[end+len("</function>"):])
		}
	case strings.HasPrefix(t, "{"), strings.HasPrefix(t, "["):
		calls, ok := parseJSONCalls(t)
		if !ok {
			return nil, false
		}
		out = calls
	default:
		return nil, false
	}
	return out, len(out) > 0
}

// leakMarkers start a call written as text.
var leakMarkers = []string{"<tool_call>", "<|tool_call|>", "<function="}

// leakFilter holds back answer text that may be a tool call a server
// passed through as text, only for a request that offered tools. Text
// before a marker goes out as it comes; from a marker on (or, when the
// answer starts with JSON, from its start) it is held until the answer
// ends, then read as calls to the offered tools, or given out as the text
// it was after all.
type leakFilter struct {
	tools   map[string]bool
	shown   bool   // text went out: a bare JSON answer is no longer possible
	partial string // the end of the text so far, maybe the start of a marker
	held    strings.Builder
	holding bool
}

func newLeakFilter(req *Request) *leakFilter {
	if len(req.Tools) == 0 {
		return nil
	}
	f := &leakFilter{tools: map[string]bool{}}
	for _, t := range req.Tools {
		f.tools[t.Name] = true
	}
	return f
}

// text takes a text chunk and returns what may be shown now.
func (f *leakFilter) text(s string) string {
	if f == nil {
		return s
	}
	if f.holding {
		f.held.WriteString(s)
		return ""
	}
	s = f.partial + s
	f.partial = ""
	if !f.shown {
		if t := strings.TrimLeft(s, " \t\r\n"); t == "" {
			f.partial = s // only blank space so far
			return ""
		} else if t[0] == '{' || t[0] == '[' {
			f.holding = true
			f.held.WriteString(s)
			return ""
		}
	}
	cut := -1
	for _, m := range leakMarkers {
		if i := strings.Index(s, m); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		f.holding = true
		f.held.WriteString(s[cut:])
		s = s[:cut]
	} else {
		// Keep back an end that could be the start of a marker.
		for _, m := range leakMarkers {
			for n := min(len(m)-1, len(s)); n > 0; n-- {
				if strings.HasSuffix(s, m[:n]) && n > len(f.partial) {
					f.partial = s[len(s)-n:]
					break
				}
			}
		}
		s = s[:len(s)-len(f.partial)]
	}
	if s != "" {
		f.shown = true
	}
	return s
}

// end returns the calls in the held text, when it is markup of calls to
// offered tools, and else the text still to show. An answer that also has
// real calls (realCalls) keeps its markup as text.
func (f *leakFilter) end(realCalls bool) (calls []markupCall, rest string) {
	if f == nil {
		return nil, ""
	}
	held := f.held.String()
	if f.holding && !realCalls {
		if cs, ok := parseMarkup(held); ok {
			for _, c := range cs {
				if !f.tools[c.Name] {
					return nil, f.partial + held
				}
			}
			return cs, ""
		}
	}
	return nil, f.partial + held
}

// rejectedCall is the call an endpoint rejected (Groq's failed_generation),
// as it goes back to the model: the name and arguments read from what the
// model wrote, or a placeholder when they cannot be.
func rejectedCall(written string) markupCall {
	if cs, ok := parseMarkup(written); ok {
		return cs[0]
	}
	if c, ok := parseFunctionTag(written); ok {
		return c
	}
	return markupCall{Name: "invalid_tool_call", Arguments: json.RawMessage("{}")}
}

// maxRejectedCalls bounds how often one request is asked again after the
// endpoint rejected the model's call.
const maxRejectedCalls = 2

// withRejectedCall is req with the rejected call and its failure appended,
// as a client sends a failed call back: an assistant message with the call
// and a tool result with the endpoint's message, so the model writes it
// again. n numbers the rejection within the request.
func withRejectedCall(req *Request, e *Error, n int) *Request {
	c := rejectedCall(e.FailedCall)
	id := fmt.Sprintf("rejected_call_%d", n)
	written := e.FailedCall
	if len(written) > 2000 {
		written = written[:2000] + "…"
	}
	out := *req
	out.Messages = append(append([]Message(nil), req.Messages...),
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: c.Name, Arguments: c.Arguments}}},
		Message{Role: RoleTool, ToolCallID: id, Content: "Error: the tool call was rejected before it ran: " + e.Msg +
			"\nWhat you wrote: " + written + "\nCall the tool again, with arguments that match its parameters."})
	return &out
}
