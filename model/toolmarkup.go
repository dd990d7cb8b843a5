package model

import (
	"encoding/json"
	"fmt"
	"io"
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

// The tag patterns are compiled at first use, not at package
// initialisation: start-up runs before the editor's initialize is answered,
// and most sessions never meet markup.
var (
	functionTag = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`<function=([A-Za-z0-9_.:\-]+)>?`)
	})
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
// passed through as text, only for a request that offered tools, and only
// as long as it may still be one. Text before a marker goes out as it
// comes. From a marker on (or, when the answer starts with JSON, from its
// start) the text is held while it reads as the start of a call (callStart)
// and goes out as soon as it cannot: a marker mentioned in prose, a JSON
// answer whose first key is not a call's, a call to a tool not offered.
// Once it names an offered tool the rest is held until the answer ends,
// then read as calls to the offered tools, or given out as the text it was
// after all.
type leakFilter struct {
	tools     map[string]bool
	shown     bool   // text went out: a bare JSON answer is no longer possible
	pending   string // text not yet shown: a possible call (holding) or the start of a marker
	holding   bool   // pending starts where a call may start
	committed bool   // pending starts a call to an offered tool: held to the end
	checkAt   int    // while undecided, look again once pending is this long
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
	if f.committed {
		f.pending += s
		return ""
	}
	buf := f.pending + s
	f.pending = ""
	var out strings.Builder
	show := func(t string) {
		if t != "" {
			out.WriteString(t)
			f.shown = true
		}
	}
	for {
		if f.holding {
			if len(buf) < f.checkAt {
				f.pending = buf
				return out.String()
			}
			switch f.callStart(buf) {
			case startUndecided:
				// The JSON of a call that does not begin with its name can
				// run long: looking again at twice the length keeps the
				// checks linear in the answer.
				if len(buf) > 256 {
					f.checkAt = 2 * len(buf)
				}
				f.pending = buf
				return out.String()
			case startCall:
				f.committed = true
				f.pending = buf
				return out.String()
			}
			// Not a call: its first byte is text, and a call may start
			// after it.
			f.holding, f.checkAt = false, 0
			show(buf[:1])
			buf = buf[1:]
		}
		if !f.shown {
			if t := strings.TrimLeft(buf, " \t\r\n"); t == "" {
				f.pending = buf // only blank space so far
				return out.String()
			} else if t[0] == '{' || t[0] == '[' {
				f.holding = true
				continue
			}
		}
		cut := -1
		for _, m := range leakMarkers {
			if i := strings.Index(buf, m); i >= 0 && (cut < 0 || i < cut) {
				cut = i
			}
		}
		if cut >= 0 {
			show(buf[:cut])
			buf = buf[cut:]
			f.holding = true
			continue
		}
		// Keep back an end that could be the start of a marker.
		keep := 0
		for _, m := range leakMarkers {
			for n := min(len(m)-1, len(buf)); n > keep; n-- {
				if strings.HasSuffix(buf, m[:n]) {
					keep = n
					break
				}
			}
		}
		show(buf[:len(buf)-keep])
		f.pending = buf[len(buf)-keep:]
		return out.String()
	}
}

// end returns the calls in the held text, when it is markup of calls to
// offered tools, and else the text still to show. An answer that also has
// real calls (realCalls) keeps its markup as text.
func (f *leakFilter) end(realCalls bool) (calls []markupCall, rest string) {
	if f == nil {
		return nil, ""
	}
	held := f.pending
	if f.holding && !realCalls {
		if cs, ok := parseMarkup(held); ok {
			for _, c := range cs {
				if !f.tools[c.Name] {
					return nil, held
				}
			}
			return cs, ""
		}
	}
	return nil, held
}

// callVerdict is what the start of held text says about a call.
type callVerdict int

const (
	startUndecided callVerdict = iota // it may still become a call
	startCall                         // it calls an offered tool
	startText                         // it cannot be a call
)

// callStart judges text that begins where a call may begin (a marker, or
// JSON at the start of the answer), reading no further than the name of
// the first call: <tool_call> then a JSON call or <function=NAME>,
// <|tool_call|> then JSON, <function=NAME>, or bare JSON.
func (f *leakFilter) callStart(text string) callVerdict {
	t := strings.TrimLeft(text, " \t\r\n")
	switch {
	case strings.HasPrefix(t, "<tool_call>"):
		body := strings.TrimLeft(t[len("<tool_call>"):], " \t\r\n")
		if strings.HasPrefix(body, "<") {
			return f.functionStart(body)
		}
		return f.jsonStart(body)
	case strings.HasPrefix(t, "<|tool_call|>"):
		return f.jsonStart(strings.TrimLeft(t[len("<|tool_call|>"):], " \t\r\n"))
	case strings.HasPrefix(t, "<"):
		return f.functionStart(t)
	}
	return f.jsonStart(t)
}

// functionStart judges <function=NAME> followed by JSON arguments,
// <parameter=…> elements or the closing tag.
func (f *leakFilter) functionStart(t string) callVerdict {
	const open = "<function="
	if len(t) < len(open) {
		if strings.HasPrefix(open, t) {
			return startUndecided
		}
		return startText
	}
	if !strings.HasPrefix(t, open) {
		return startText
	}
	rest := t[len(open):]
	n := strings.IndexFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:-", r))
	})
	if n < 0 {
		return f.namePrefix(rest)
	}
	if !f.tools[rest[:n]] {
		return startText
	}
	after := strings.TrimLeft(strings.TrimPrefix(rest[n:], ">"), " \t\r\n")
	if after == "" {
		return startUndecided
	}
	for _, next := range []string{"{", "<parameter=", "</function>"} {
		if strings.HasPrefix(after, next) {
			return startCall
		}
		if strings.HasPrefix(next, after) {
			return startUndecided
		}
	}
	return startText
}

// namePrefix judges a tool name cut off by the end of the text so far.
func (f *leakFilter) namePrefix(p string) callVerdict {
	for name := range f.tools {
		if strings.HasPrefix(name, p) {
			return startUndecided
		}
	}
	return startText
}

// jsonStart judges JSON that may be a call ({"name", "arguments"} or
// "parameters") or a list of them: decided by the first element's keys,
// which may only be those, and its name, an offered tool's.
func (f *leakFilter) jsonStart(t string) callVerdict {
	if t == "" {
		return startUndecided
	}
	if t[0] != '{' && t[0] != '[' {
		return startText
	}
	d := json.NewDecoder(strings.NewReader(t))
	undecided := func(err error) callVerdict {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return startUndecided
		}
		return startText
	}
	tok, err := d.Token()
	if err != nil {
		return undecided(err)
	}
	if tok == json.Delim('[') {
		if tok, err = d.Token(); err != nil {
			return undecided(err)
		}
		if tok != json.Delim('{') {
			return startText
		}
	}
	for {
		key, err := d.Token()
		if err != nil {
			return undecided(err)
		}
		switch key {
		case "name":
			name, err := d.Token()
			if err != nil {
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					return f.partialName(t)
				}
				return startText
			}
			if s, ok := name.(string); ok && f.tools[s] {
				return startCall
			}
			return startText
		case "arguments", "parameters":
			var v json.RawMessage
			if err := d.Decode(&v); err != nil {
				return undecided(err)
			}
		default:
			return startText // another key, or an object without a name
		}
	}
}

// partialName judges JSON cut off inside the value of "name": a string
// that no offered tool's name starts with cannot become a call.
func (f *leakFilter) partialName(t string) callVerdict {
	i := strings.LastIndex(t, `"name"`)
	v := strings.TrimLeft(t[i+len(`"name"`):], " \t\r\n:")
	if v == "" {
		return startUndecided
	}
	if v[0] != '"' || strings.ContainsRune(v[1:], '\\') {
		return startUndecided // let the whole value decide
	}
	return f.namePrefix(v[1:])
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
