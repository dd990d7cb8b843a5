package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
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
	defaultMaxTokens  = 0 // let the endpoint decide
	estimateCharsPerT = 4
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
	// IdleTimeout is how long the stream may go without a byte before the
	// attempt counts as stalled (default 2m).
	IdleTimeout time.Duration
	HTTPClient  *http.Client // default: a client without an overall timeout (streams are long)
}

// OpenAI streams chat completions from an OpenAI-compatible endpoint:
// DeepSeek, OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio.
type OpenAI struct {
	o      OpenAIOptions
	client *openai.Client
}

// NewOpenAI returns a provider for one model of one endpoint.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if o.BaseURL == "" {
		o.BaseURL = DeepSeekBaseURL
	}
	if _, err := url.ParseRequestURI(o.BaseURL); err != nil {
		return nil, fmt.Errorf("model: bad base URL %q: %w", o.BaseURL, err)
	}
	if o.Model == "" {
		return nil, fmt.Errorf("model: no model name for %s", o.BaseURL)
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdle
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	cfg := openai.DefaultConfig(o.APIKey)
	cfg.BaseURL = strings.TrimRight(o.BaseURL, "/")
	cfg.HTTPClient = retryAfterDoer{o.HTTPClient}
	// Some servers send keep-alive blank data lines; the idle timer, not a
	// count of them, decides when a stream is dead.
	cfg.EmptyMessagesLimit = 1 << 20
	return &OpenAI{o: o, client: openai.NewClientWithConfig(cfg)}, nil
}

// Options returns the provider's configuration (with defaults applied).
func (p *OpenAI) Options() OpenAIOptions { return p.o }

// retryAfterDoer sees the raw HTTP exchange go-openai hides: it records the
// Retry-After header of a failed response (its errors drop headers) and
// reports every byte of the body as it arrives (keep-alive comments
// included, which go-openai consumes silently), through the attempt the
// request's context carries.
type retryAfterDoer struct{ c *http.Client }

type attemptKey struct{}

// attempt is what one request attempt learns from the transport.
type attempt struct {
	retryAfter string
	onData     func() // called from the body reader on each read with data
	cache      *cacheHitSniffer
}

func (d retryAfterDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if err != nil {
		return resp, err
	}
	if at, ok := req.Context().Value(attemptKey{}).(*attempt); ok {
		if resp.StatusCode >= 400 {
			at.retryAfter = resp.Header.Get("Retry-After")
		}
		at.onData()
		resp.Body = &activityBody{ReadCloser: resp.Body, onData: at.onData, cache: at.cache}
	}
	return resp, err
}

type activityBody struct {
	io.ReadCloser
	onData func()
	cache  *cacheHitSniffer // nil: not looked for
}

func (b *activityBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.onData()
		if b.cache != nil {
			b.cache.feed(p[:n])
		}
	}
	return n, err
}

var errStalled = errors.New("no data from the model endpoint within the idle timeout")

// Stream makes one streaming chat-completions request. It does not retry;
// wrap it with Retry for that.
func (p *OpenAI) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if p.o.RequireKey && p.o.APIKey == "" {
			yield(Event{}, &Error{Kind: ErrAuth, Msg: p.o.APIKeyEnv + " is not set", Hint: p.keyHint(), KeyEnv: p.o.APIKeyEnv})
			return
		}
		// The idle timer cancels the attempt when the endpoint goes quiet;
		// every chunk received pushes it back.
		actx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		idle := time.AfterFunc(p.o.IdleTimeout, func() { cancel(errStalled) })
		defer idle.Stop()
		at := &attempt{onData: func() { idle.Reset(p.o.IdleTimeout) }, cache: newCacheHitSniffer()}
		actx = context.WithValue(actx, attemptKey{}, at)

		started := false // a response arrived: later failures are the stream's
		fail := func(err error) {
			if ctx.Err() != nil {
				yield(Event{}, ctx.Err())
				return
			}
			yield(Event{}, p.classify(err, context.Cause(actx), at.retryAfter, started))
		}

		stream, err := p.client.CreateChatCompletionStream(actx, p.request(req))
		if err != nil {
			fail(err)
			return
		}
		defer stream.Close()
		started = true

		var (
			calls    toolCalls
			respID   string
			finish   Finish
			usage    *Usage
			outChars int
		)
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				fail(err)
				return
			}
			if respID == "" {
				respID = chunk.ID
			}
			if chunk.Usage != nil {
				usage = convertUsage(chunk.Usage)
			}
			for _, ch := range chunk.Choices {
				if ch.Index != 0 {
					continue // we never ask for n > 1
				}
				d := ch.Delta
				if d.ReasoningContent != "" {
					outChars += len(d.ReasoningContent)
					if !yield(Event{Kind: EventThought, Text: d.ReasoningContent}, nil) {
						return
					}
				}
				if d.Content != "" {
					outChars += len(d.Content)
					if !yield(Event{Kind: EventText, Text: d.Content}, nil) {
						return
					}
				}
				for _, tc := range d.ToolCalls {
					calls.add(tc)
				}
				if ch.FinishReason == finishResourcesExhausted {
					fail(&Error{Kind: ErrServer, Msg: "the endpoint ran out of resources mid-answer (" + finishResourcesExhausted + ")"})
					return
				}
				if ch.FinishReason != "" {
					finish = convertFinish(ch.FinishReason)
				}
			}
		}
		if finish == "" {
			// go-openai reports "[DONE]" and a connection closed early alike
			// as io.EOF; without a finish_reason the answer is incomplete.
			fail(&Error{Kind: ErrTransport, Msg: "the stream ended before the response was complete"})
			return
		}
		if finish == FinishStop && outChars == 0 && calls.len() == 0 {
			// Nothing at all: a hiccup of the endpoint, worth another try.
			fail(&Error{Kind: ErrServer, Msg: "the model returned an empty response"})
			return
		}
		for _, c := range calls.complete(respID) {
			outChars += len(c.Arguments)
			if !yield(Event{Kind: EventToolCall, ToolCall: &c}, nil) {
				return
			}
		}
		if usage == nil {
			usage = &Usage{InputTokens: estimateTokens(req), OutputTokens: outChars / estimateCharsPerT, Estimated: true}
		} else if usage.CachedTokens == 0 && at.cache.hit > 0 {
			usage.CachedTokens = at.cache.hit // DeepSeek's own field
		}
		usage.ContextWindow = p.o.ContextWindow
		if !yield(Event{Kind: EventUsage, Usage: usage}, nil) {
			return
		}
		if finish == FinishStop && calls.len() > 0 {
			finish = FinishToolCalls // some servers say "stop" after tool calls
		}
		yield(Event{Kind: EventFinish, Finish: finish}, nil)
	}
}

func (p *OpenAI) keyHint() string {
	env := p.o.APIKeyEnv
	if env == "" {
		env = "the API key variable"
	}
	return fmt.Sprintf("Set %s to a valid key for %s (or name another variable with --api-key-env) and restart acp-bridge", env, p.o.BaseURL)
}

// classify turns whatever failed into an *Error. cause is the attempt
// context's cause (errStalled when the idle timer fired).
func (p *OpenAI) classify(err, cause error, retryAfter string, started bool) error {
	var me *Error
	if errors.As(err, &me) {
		return me
	}
	if errors.Is(cause, errStalled) {
		return &Error{Kind: ErrStalled, Msg: fmt.Sprintf("nothing received for %s", p.o.IdleTimeout), Err: err}
	}
	e := &Error{Err: err, RetryAfter: parseRetryAfter(retryAfter, time.Now())}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0:
		e.Status, e.Msg = apiErr.HTTPStatusCode, apiErr.Message
		e.Kind = kindForStatus(e.Status, e.Msg)
	case errors.As(err, &reqErr):
		e.Status, e.Msg = reqErr.HTTPStatusCode, strings.TrimSpace(truncate(string(reqErr.Body), 300))
		if e.Msg == "" {
			e.Msg = reqErr.HTTPStatus
		}
		e.Kind = kindForStatus(e.Status, e.Msg)
	case errors.As(err, &apiErr):
		// An error object inside the event stream: the server gave up mid-answer.
		e.Msg = apiErr.Message
		e.Kind = ErrServer
		if contextWindowMessage(e.Msg) {
			e.Kind = ErrContextWindow
		}
	default:
		var se *json.SyntaxError
		var ue *url.Error
		var ne net.Error
		switch {
		case errors.As(err, &se):
			e.Kind, e.Msg = ErrMalformed, err.Error()
		case started || errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF):
			e.Kind, e.Msg = ErrTransport, err.Error()
		default:
			// Refused by the client library before anything was sent (its
			// own checks of the request): sending it again cannot help.
			e.Kind, e.Msg = ErrInvalidRequest, err.Error()
		}
	}
	if e.Kind == ErrAuth {
		e.Hint, e.KeyEnv = p.keyHint(), p.o.APIKeyEnv
	}
	return e
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

// request converts the conversation to the wire request.
func (p *OpenAI) request(req *Request) openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{
		Model:         p.o.Model,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if reasoningModel(p.o.Model) {
		// OpenAI's reasoning models take max_completion_tokens only.
		out.MaxCompletionTokens = p.o.MaxTokens
	} else {
		// max_tokens is what DeepSeek, Ollama, vLLM and llama.cpp read; the
		// newer field is OpenAI's alone.
		out.MaxTokens = p.o.MaxTokens //lint:ignore SA1019 see above
	}
	for _, m := range req.Messages {
		w := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		switch m.Role {
		case RoleAssistant:
			// DeepSeek's thinking mode wants the reasoning of earlier turns
			// back, and requires it on turns that called tools.
			w.ReasoningContent = m.Reasoning
			for _, c := range m.ToolCalls {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				w.ToolCalls = append(w.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: c.Name, Arguments: args}})
			}
		case RoleTool:
			if w.Content == "" {
				w.Content = "(no output)" // several servers reject an empty tool message
			}
		case RoleUser:
			if len(m.Images) > 0 && p.o.Images {
				w.Content = ""
				if m.Content != "" {
					w.MultiContent = append(w.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: m.Content})
				}
				for _, img := range m.Images {
					w.MultiContent = append(w.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
						ImageURL: &openai.ChatMessageImageURL{URL: "data:" + img.MimeType + ";base64," + img.Data}})
				}
			}
		}
		out.Messages = append(out.Messages, w)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out
}

// finishResourcesExhausted is DeepSeek's finish_reason for an answer cut
// short by load on its side.
const finishResourcesExhausted = "insufficient_system_resource"

func reasoningModel(name string) bool {
	for _, pre := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

func convertFinish(r openai.FinishReason) Finish {
	switch r {
	case openai.FinishReasonToolCalls, openai.FinishReasonFunctionCall:
		return FinishToolCalls
	case openai.FinishReasonLength:
		return FinishLength
	case openai.FinishReasonContentFilter:
		return FinishContentFilter
	}
	return FinishStop
}

func convertUsage(u *openai.Usage) *Usage {
	out := &Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
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

// toolCalls assembles calls from streamed deltas: the first delta of a call
// carries its id and name, later ones pieces of the arguments, all keyed by index.
type toolCalls struct {
	byIdx map[int]*partialCall
	order []int
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

func (t *toolCalls) add(d openai.ToolCall) {
	if t.byIdx == nil {
		t.byIdx = map[int]*partialCall{}
	}
	idx := -1
	switch {
	case d.Index != nil:
		idx = *d.Index
	case len(t.order) > 0 && (d.ID == "" || t.byIdx[t.order[len(t.order)-1]].id == d.ID):
		// No index (some servers): a delta without a new id continues the last call.
		idx = t.order[len(t.order)-1]
	default:
		idx = len(t.order)
		for slices.Contains(t.order, idx) {
			idx++
		}
	}
	c := t.byIdx[idx]
	if c == nil {
		c = &partialCall{}
		t.byIdx[idx] = c
		t.order = append(t.order, idx)
	}
	if d.ID != "" {
		c.id = d.ID
	}
	if d.Function.Name != "" {
		c.name = d.Function.Name
	}
	c.args.WriteString(d.Function.Arguments)
}

func (t *toolCalls) len() int { return len(t.order) }

// complete returns the calls in index order. A call the server gave no id
// gets one derived from the response id, so the tool result can refer back to it.
func (t *toolCalls) complete(respID string) []ToolCall {
	idx := slices.Clone(t.order)
	slices.Sort(idx)
	out := make([]ToolCall, 0, len(idx))
	for i, k := range idx {
		c := t.byIdx[k]
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%s_%d", respID, i+1)
		}
		args := strings.TrimSpace(c.args.String())
		if args == "" {
			args = "{}"
		}
		out = append(out, ToolCall{ID: id, Name: c.name, Arguments: json.RawMessage(args)})
	}
	return out
}
