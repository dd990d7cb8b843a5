package model

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// DeepSeek defaults: the provider used when nothing else is configured.
const (
	DeepSeekBaseURL   = "https://api.deepseek.com"
	DeepSeekKeyEnv    = "DEEPSEEK_API_KEY"
	DeepSeekModel     = "deepseek-chat"
	OpenAIKeyEnv      = "OPENAI_API_KEY"
	OpenAIBaseURLEnv  = "OPENAI_BASE_URL"
	defaultIdle       = 2 * time.Minute
	estimateCharsPerT = 4
	// connectTimeout bounds the TCP and TLS handshakes: an address that
	// swallows packets fails in seconds, not at the idle timeout.
	connectTimeout = 10 * time.Second
	maxErrorBody   = 64 << 10
	maxWholeBody   = 32 << 20
)

// OpenAIOptions configure an OpenAI-compatible chat-completions provider.
type OpenAIOptions struct {
	BaseURL string // e.g. https://api.deepseek.com, http://localhost:11434/v1
	Model   string
	APIKey  string
	// APIKeyEnv names the variable the key came from, so failures can say
	// which one to set.
	APIKeyEnv string
	// RequireKey: fail without a request when APIKey is empty (hosted
	// endpoints); local servers (Ollama, llama.cpp) need none.
	RequireKey bool
	MaxTokens  int // max_tokens per response; 0 leaves it to the endpoint
	// ContextWindow is reported with usage (the usage_update size).
	ContextWindow int
	// Images: the model accepts image input.
	Images bool
	// IdleTimeout is how long the endpoint may go without sending a byte
	// (before the response starts, or in the middle of it) before the
	// attempt counts as stalled (default 2m).
	IdleTimeout time.Duration
	HTTPClient  *http.Client // default: a client without an overall timeout (streams are long)
	// Headers go with every request, replacing the library's (a provider
	// an editor configured: its key is among them). They are secrets:
	// nothing logs them, and a redirect to another host does not get them.
	Headers map[string]string
}

// OpenAI streams chat completions from an OpenAI-compatible endpoint:
// DeepSeek, OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio, Mistral,
// xAI, Groq, OpenRouter, Gemini's compatible layer. go-openai builds and
// sends the request and frames the stream; endpoint (its HTTP client) and
// the chunk decoder answer for what the library cannot express.
type OpenAI struct {
	o        OpenAIOptions
	endpoint string // the chat-completions URL
	client   *openai.Client
	// reasoningField is the field the endpoint last streamed reasoning in,
	// and so the one it reads back: "reasoning_content" until seen otherwise.
	reasoningField atomic.Value
}

// NewOpenAI returns a provider for one model of one endpoint.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if o.BaseURL == "" {
		o.BaseURL = DeepSeekBaseURL
	}
	if u, err := url.Parse(o.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model: base URL %q is not an http(s) URL", o.BaseURL)
	}
	if o.Model == "" {
		return nil, fmt.Errorf("model: no model name for %s", o.BaseURL)
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdle
	}
	if o.HTTPClient == nil {
		o.HTTPClient = defaultClient
	}
	if len(o.Headers) > 0 {
		o.HTTPClient = sameHostRedirects(o.HTTPClient)
	}
	p := &OpenAI{o: o, endpoint: strings.TrimRight(o.BaseURL, "/") + "/chat/completions"}
	p.reasoningField.Store("reasoning_content")
	cfg := openai.DefaultConfig(o.APIKey)
	cfg.BaseURL = o.BaseURL
	cfg.HTTPClient = endpoint{p: p, client: o.HTTPClient}
	// The library fails a stream after this many non-data lines in a row;
	// keep-alive comments are such lines, and the idle timeout, not a count
	// of them, decides when a stream is dead.
	cfg.EmptyMessagesLimit = math.MaxUint
	p.client = openai.NewClientWithConfig(cfg)
	return p, nil
}

var defaultClient = &http.Client{Transport: func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connectTimeout
	return t
}()}

// sameHostRedirects is c refusing to follow a redirect to another host:
// the headers set on the first request (the key among them) would follow
// it there.
func sameHostRedirects(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
			return fmt.Errorf("redirected to another host (%s); not following with the provider's headers", req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}

// Options returns the provider's configuration (with defaults applied).
func (p *OpenAI) Options() OpenAIOptions { return p.o }

// Stream makes one streaming chat-completions request. It does not retry;
// wrap it with Retry for that.
func (p *OpenAI) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if p.o.RequireKey && p.o.APIKey == "" {
			yield(Event{}, &Error{Kind: ErrAuth, Msg: p.o.APIKeyEnv + " is not set", Hint: p.keyHint(), KeyEnv: p.o.APIKeyEnv})
			return
		}
		fail := func(err error) {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			yield(Event{}, err)
		}
		stream, err := p.client.CreateChatCompletionStream(ctx, p.request(req))
		if err != nil {
			var me *Error
			if !errors.As(err, &me) {
				// The library refused the request before sending it.
				me = &Error{Kind: ErrInvalidRequest, URL: p.endpoint, Msg: err.Error(), Err: err}
			}
			fail(me)
			return
		}
		defer stream.Close()
		st := &streamState{p: p, yield: yield, leak: newLeakFilter(req)}
		for !st.done && !st.stopped {
			raw, err := stream.RecvRaw()
			if errors.Is(err, errBodyEnded) {
				break
			}
			if errors.Is(err, io.EOF) {
				st.done = true // data: [DONE]
				break
			}
			if err != nil {
				fail(p.transportError(err))
				return
			}
			if err := st.line(raw); err != nil {
				fail(err)
				return
			}
		}
		if st.stopped {
			return
		}
		st.finishUp(req, fail)
	}
}

// streamState folds one response's chunks into events.
type streamState struct {
	p        *OpenAI
	yield    func(Event, error) bool
	calls    toolCalls
	respID   string
	finish   Finish
	usage    *Usage
	outChars int
	// pending is a data line that is the start of a JSON object: an event
	// over several data lines, which the library hands over one by one.
	pending []byte
	done    bool // [DONE]: nothing more will come
	stopped bool // the consumer stopped listening
	sawData bool
	leak    *leakFilter // answer text that may be calls written as text; nil without tools
}

func (st *streamState) emit(ev Event) {
	if !st.stopped && !st.yield(ev, nil) {
		st.stopped = true
	}
}

// line handles the data of one "data:" line.
func (st *streamState) line(data []byte) error {
	if st.pending != nil {
		data = append(append(st.pending, '\n'), data...)
		st.pending = nil
	}
	if len(data) == 0 {
		return nil
	}
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset >= int64(len(data)) {
			st.pending = bytes.Clone(data) // the rest follows on the next data line
			return nil
		}
		if !st.sawData && data[0] == '<' {
			return st.p.notAPI(http.StatusOK, data)
		}
		return st.malformed(data, err)
	}
	st.sawData = true
	return st.chunk(&c)
}

func (st *streamState) malformed(data []byte, err error) error {
	return &Error{Kind: ErrMalformed, URL: st.p.endpoint, Msg: "a chunk is not JSON: " + truncate(string(data), 120), Err: err}
}

// chunk handles one decoded chunk (or whole response).
func (st *streamState) chunk(c *wireChunk) error {
	if we, ok := parseWireError(c.Error); len(c.Error) > 0 && ok {
		if st.finish == FinishLength {
			// The answer already ended at the token limit, and the
			// endpoint says so again as an error (OpenRouter: "Token limit
			// reached", alone or in a chunk with finish_reason "error"):
			// the answer stands, cut at the limit, with what it streamed,
			// and the endpoint's words reach the user.
			if msg := strings.TrimSpace(we.Message); msg != "" {
				st.emit(Event{Kind: EventNotice, Text: truncate(msg, 500)})
			}
			return nil
		}
		return st.p.streamError(we)
	}
	if len(c.Choices) == 0 && c.Usage == nil {
		if msg, ok := detailMessage(c.Detail); ok && c.Message == "" {
			c.Message = msg
		}
		if c.Message != "" {
			return st.p.streamError(wireError{Message: c.Message})
		}
	}
	if st.respID == "" {
		st.respID = c.ID
	}
	if c.Usage != nil {
		st.usage = c.Usage.usage()
	} else if c.XGroq != nil && c.XGroq.Usage != nil {
		st.usage = c.XGroq.Usage.usage()
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we never ask for n > 1
		}
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d != nil {
			st.delta(d)
		}
		switch ch.FinishReason {
		case "":
		case "error":
			if st.finish == FinishLength {
				continue // the limit again (above)
			}
			// OpenRouter: the upstream provider failed mid-answer; the
			// error object, when there is one, was handled above.
			return st.p.streamError(wireError{Message: "the endpoint reported an error mid-answer (finish_reason \"error\")"})
		case finishResourcesExhausted:
			return st.p.streamError(wireError{Message: "the endpoint ran out of resources mid-answer (" + finishResourcesExhausted + ")"})
		default:
			st.finish = convertFinish(string(ch.FinishReason))
		}
	}
	return nil
}

func (st *streamState) delta(d *wireDelta) {
	// Both fields, when a server fills both, usually say the same thing.
	if d.ReasoningContent != "" {
		st.outChars += len(d.ReasoningContent)
		st.emit(Event{Kind: EventThought, Text: d.ReasoningContent})
	}
	if d.Reasoning != "" && d.Reasoning != d.ReasoningContent {
		st.outChars += len(d.Reasoning)
		st.emit(Event{Kind: EventThought, Text: d.Reasoning})
		if d.ReasoningContent == "" {
			st.p.reasoningField.Store("reasoning")
		}
	}
	text, thought := contentParts(d.Content)
	if thought != "" {
		st.outChars += len(thought)
		st.emit(Event{Kind: EventThought, Text: thought})
	}
	if text != "" {
		st.outChars += len(text)
		if text = st.leak.text(text); text != "" {
			st.emit(Event{Kind: EventText, Text: text})
		}
	}
	if d.Refusal != "" {
		st.outChars += len(d.Refusal)
		st.emit(Event{Kind: EventText, Text: d.Refusal})
	}
	for _, tc := range d.ToolCalls {
		st.calls.add(tc)
	}
}

// finishUp checks the response is whole and yields its calls, usage and finish.
func (st *streamState) finishUp(req *Request, fail func(error)) {
	if st.pending != nil {
		fail(st.malformed(st.pending, io.ErrUnexpectedEOF))
		return
	}
	if st.finish == "" {
		if !st.done {
			// A connection closed early looks like a clean end to the
			// reader; without a finish_reason or [DONE] the answer is cut.
			fail(&Error{Kind: ErrTransport, URL: st.p.endpoint, Msg: "the stream ended before the response was complete"})
			return
		}
		st.finish = FinishStop // [DONE] without a finish_reason (some local servers)
	}
	leaked, rest := st.leak.end(st.calls.len() > 0)
	if rest != "" {
		st.emit(Event{Kind: EventText, Text: rest})
	}
	if len(leaked) > 0 {
		// A server without a tool parser passed the model's calls through
		// as text: they are the calls they were meant to be.
		for i, c := range leaked {
			id := fmt.Sprintf("call_text_%d", i+1)
			if st.respID != "" {
				id = fmt.Sprintf("%s_text_%d", st.respID, i+1)
			}
			st.emit(Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: id, Name: c.Name, Arguments: c.Arguments}})
		}
		if st.finish == FinishStop {
			st.finish = FinishToolCalls
		}
	}
	if st.finish == FinishStop && st.outChars == 0 && st.calls.len() == 0 {
		// Nothing at all: a hiccup of the endpoint, worth another try.
		fail(&Error{Kind: ErrServer, URL: st.p.endpoint, Msg: "the model returned an empty response"})
		return
	}
	for _, c := range st.calls.complete(st.respID) {
		st.outChars += len(c.Arguments)
		st.emit(Event{Kind: EventToolCall, ToolCall: &c})
	}
	if st.usage == nil {
		st.usage = &Usage{InputTokens: estimateTokens(req), OutputTokens: st.outChars / estimateCharsPerT, Estimated: true}
	}
	st.usage.ContextWindow = st.p.o.ContextWindow
	st.emit(Event{Kind: EventUsage, Usage: st.usage})
	if st.finish == FinishStop && st.calls.len() > 0 {
		st.finish = FinishToolCalls // some servers say "stop" after tool calls
	}
	st.emit(Event{Kind: EventFinish, Finish: st.finish})
}

func (p *OpenAI) keyHint() string {
	env := p.o.APIKeyEnv
	if env == "" {
		env = "the API key variable"
	}
	return fmt.Sprintf("Set %s to a valid key for %s (or name another variable with --api-key-env) and restart acp-bridge", env, p.o.BaseURL)
}

// baseURLHint is the likely fix for an endpoint that does not serve
// chat completions where we asked: most OpenAI-compatible servers serve
// them under /v1, and a base URL without it is the usual mistake.
func (p *OpenAI) baseURLHint() string {
	base := strings.TrimRight(p.o.BaseURL, "/")
	if u, err := url.Parse(base); err == nil && !strings.Contains(u.Path, "/v1") && !strings.Contains(u.Path, "/openai") {
		if u.Path == "" {
			return fmt.Sprintf("The base URL probably lacks /v1: try %s/v1", base)
		}
		return fmt.Sprintf("The base URL probably should end in /v1 (e.g. %s://%s/v1)", u.Scheme, u.Host)
	}
	return fmt.Sprintf("Check the base URL (%s): it should be the part before /chat/completions", base)
}

// statusError describes an HTTP error response.
func (p *OpenAI) statusError(resp *http.Response, body io.Reader) error {
	b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	e := &Error{Status: resp.StatusCode, URL: p.endpoint, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	html := ct == "text/html" || looksHTML(b)
	switch msg, ok := errorBody(b); {
	case html:
		// A proxy's error page: its title says enough, the markup is noise.
		e.Msg = "an HTML error page"
		if t := htmlTitle(b); t != "" {
			e.Msg += fmt.Sprintf(" (%q)", t)
		}
	case ok:
		e.Msg = truncate(strings.TrimSpace(msg), 300)
	default:
		e.Msg = truncate(strings.TrimSpace(string(b)), 200)
	}
	e.Kind = kindForStatus(e.Status, e.Msg)
	switch {
	case e.Kind == ErrAuth:
		e.Hint, e.KeyEnv = p.keyHint(), p.o.APIKeyEnv
	case e.Status == http.StatusNotFound && strings.Contains(strings.ToLower(e.Msg), "model"):
		e.Hint = fmt.Sprintf("Check the model name (%q)", p.o.Model)
	case e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed:
		e.Kind = ErrNotAPI
		e.Hint = p.baseURLHint()
	case html && e.Status < 500 && e.Kind != ErrRateLimit:
		e.Kind = ErrNotAPI
		e.Hint = p.baseURLHint()
	}
	return e
}

// notAPI describes a 2xx answer that is not an API response (an HTML page
// from a web server or captive portal, or some other text).
func (p *OpenAI) notAPI(status int, b []byte) error {
	e := &Error{Kind: ErrNotAPI, URL: p.endpoint, Hint: p.baseURLHint()}
	if looksHTML(b) || len(b) == 0 {
		e.Msg = "it answered with a web page"
		if t := htmlTitle(b); t != "" {
			e.Msg += fmt.Sprintf(" (%q)", t)
		}
	} else {
		e.Msg = "it answered " + truncate(strings.TrimSpace(string(bytes.ToValidUTF8(b, nil))), 80)
	}
	if status != http.StatusOK {
		e.Status = status
	}
	return e
}

// streamError is an error the endpoint reported inside a 200 response.
func (p *OpenAI) streamError(we wireError) error {
	e := &Error{Kind: ErrServer, URL: p.endpoint, Msg: we.Message}
	if e.Msg == "" {
		e.Msg = "an error object without a message"
	}
	if we.Metadata != nil && we.Metadata.ProviderName != "" {
		e.Msg += " (" + we.Metadata.ProviderName + ")"
	}
	var code string
	_ = json.Unmarshal(we.Code, &code)
	tags := strings.ToLower(we.Type + " " + code)
	switch st := we.codeStatus(); {
	case code == "tool_use_failed":
		e.Kind, e.FailedCall = ErrCallRejected, we.FailedGeneration
	case st != 0:
		e.Kind = kindForStatus(st, e.Msg)
	case strings.Contains(tags, "rate_limit"):
		e.Kind = ErrRateLimit
	case contextWindowMessage(e.Msg) || strings.Contains(tags, "context_length"):
		e.Kind = ErrContextWindow
	case strings.Contains(tags, "invalid_request"):
		e.Kind = ErrInvalidRequest
	}
	if e.Kind == ErrAuth {
		e.Hint, e.KeyEnv = p.keyHint(), p.o.APIKeyEnv
	}
	return e
}

// transportError describes a request that got no HTTP answer, or whose
// body broke off.
func (p *OpenAI) transportError(err error) error {
	var me *Error
	if errors.As(err, &me) {
		return me
	}
	e := &Error{Kind: ErrTransport, URL: p.endpoint, Err: err}
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var certErr x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Kind, e.Msg = ErrUnreachable, "connection refused"
		e.Hint = "Is the server running? Check the base URL (" + p.o.BaseURL + ")"
	case errors.As(err, &dns) && dns.IsNotFound:
		e.Kind, e.Msg = ErrUnreachable, "no such host "+dns.Name
		e.Hint = "Check the base URL (" + p.o.BaseURL + ")"
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &certErr):
		e.Kind, e.Msg = ErrUnreachable, "its TLS certificate is not valid: "+innerError(err)
	case errors.As(err, &recErr):
		e.Kind, e.Msg = ErrUnreachable, "it does not speak TLS"
		e.Hint = "Use http:// rather than https:// in the base URL"
	default:
		e.Msg = innerError(err)
	}
	return e
}

// innerError drops the "Post \"url\": " prefix net/http puts on its errors;
// the URL is named once, by Error.
func innerError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "the connection closed mid-response"
	}
	return err.Error()
}

func looksHTML(b []byte) bool {
	b = bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")))
	if len(b) == 0 || b[0] != '<' {
		return false
	}
	head := strings.ToLower(string(b[:min(len(b), 256)]))
	return strings.HasPrefix(head, "<!doctype") || strings.Contains(head, "<html") || strings.Contains(head, "<head") ||
		strings.Contains(head, "<body") || strings.Contains(head, "<title") || strings.Contains(head, "<center") || strings.Contains(head, "<h1")
}

// titleRE is compiled at first use: package initialisers run before the
// editor's initialize is answered.
var titleRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>|<h1[^>]*>(.*?)</h1>`)
})

// tagRE is an HTML tag inside a title, compiled at first use like titleRE.
var tagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })

func htmlTitle(b []byte) string {
	m := titleRE().FindSubmatch(b)
	if m == nil {
		return ""
	}
	t := m[1]
	if len(t) == 0 {
		t = m[2]
	}
	s := strings.Join(strings.Fields(string(t)), " ")
	s = tagRE().ReplaceAllString(s, "")
	return truncate(s, 80)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// finishResourcesExhausted is DeepSeek's finish_reason for an answer cut
// short by load on its side.
const finishResourcesExhausted = "insufficient_system_resource"

func convertFinish(r string) Finish {
	switch r {
	case "tool_calls", "function_call":
		return FinishToolCalls
	case "length", "max_tokens":
		return FinishLength
	case "content_filter", "safety":
		return FinishContentFilter
	}
	return FinishStop
}

// estimateTokens guesses the prompt size for endpoints that report no usage.
func estimateTokens(req *Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + len(m.Reasoning) + 8
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n / estimateCharsPerT
}
