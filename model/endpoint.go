package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
)

// endpoint is the HTTPDoer go-openai sends its requests through. The
// library builds the request and reads the event stream; endpoint sees the
// HTTP exchange it hides, and answers for what it cannot tell apart:
//   - an answer that is not an API response (a web page, a proxy's error
//     page, a JSON body to a streaming request, plain text) and every
//     non-2xx status: go-openai's handleErrorResp keeps neither the
//     headers (Retry-After) nor the content type, and reads only
//     {"error":{"message"}};
//   - an endpoint that goes quiet: no byte within the idle timeout;
//   - the field the endpoint reads reasoning back in, which go-openai's
//     ChatCompletionMessage cannot name (it marshals reasoning_content only).
//
// Every error it returns, from Do or from reading the body, is an *Error.
type endpoint struct {
	p      *OpenAI
	client *http.Client
}

var errStalled = errors.New("no data from the model endpoint within the idle timeout")

func (e endpoint) Do(req *http.Request) (*http.Response, error) {
	p := e.p
	// The idle timer cancels the attempt when the endpoint goes quiet;
	// every byte received pushes it back.
	ctx, cancel := context.WithCancelCause(req.Context())
	req = req.WithContext(ctx)
	for k, v := range p.o.Headers {
		req.Header.Set(k, v)
	}
	if field, _ := p.reasoningField.Load().(string); field == "reasoning" {
		if err := renameReasoning(req); err != nil {
			cancel(nil)
			return nil, &Error{Kind: ErrInvalidRequest, URL: p.endpoint, Msg: err.Error(), Err: err}
		}
	}
	idle := time.AfterFunc(p.o.IdleTimeout, func() { cancel(errStalled) })
	stop := func() { idle.Stop(); cancel(nil) }
	readErr := func(err error) error {
		if errors.Is(context.Cause(ctx), errStalled) {
			return &Error{Kind: ErrStalled, URL: p.endpoint, Msg: fmt.Sprintf("nothing received for %s", p.o.IdleTimeout),
				Hint: "The server may be overloaded or still loading the model; --stream-idle-timeout sets how long to wait", Err: err}
		}
		return p.transportError(err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		stop()
		return nil, readErr(err)
	}
	idle.Reset(p.o.IdleTimeout)
	body := &activityBody{Reader: resp.Body, onData: func() { idle.Reset(p.o.IdleTimeout) }}
	raw := resp.Body
	closeAll := func() error { stop(); return raw.Close() }
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := p.statusError(resp, body)
		closeAll()
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var src io.Reader = body
	switch ct {
	case "text/html", "application/xhtml+xml":
		b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
		closeAll()
		return nil, p.notAPI(resp.StatusCode, b)
	case "application/json":
		// A server that ignored stream: true answers in one piece; the
		// library reads event streams only, so it gets it as one event.
		b, err := io.ReadAll(io.LimitReader(body, maxWholeBody))
		closeAll()
		if err != nil {
			return nil, readErr(err)
		}
		var one bytes.Buffer
		one.WriteString("data: ")
		if json.Compact(&one, b) != nil {
			return nil, p.notAPI(resp.StatusCode, b)
		}
		one.WriteString("\n\ndata: [DONE]\n\n")
		src = &one
	}
	resp.Body = &streamBody{p: p, r: bufio.NewReaderSize(src, 32<<10), close: closeAll, fail: readErr, lineStart: true}
	return resp, nil
}

// activityBody reports every read with data, so the idle timer sees
// keep-alive comments as activity too.
type activityBody struct {
	io.Reader
	onData func()
}

func (b *activityBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if n > 0 {
		b.onData()
	}
	return n, err
}

// errBodyEnded is what the stream body reports at its end instead of io.EOF:
// go-openai's RecvRaw answers io.EOF both for "data: [DONE]" and for a body
// that simply stopped (stream_reader.go processLines), and only the first
// is a whole answer. With this, RecvRaw's io.EOF means [DONE] alone.
var errBodyEnded = errors.New("the response body ended")

// streamBody is the response body go-openai's stream reader reads. It
// passes the event stream through line by line, as it came, except where
// the library would misread it:
//   - a line that is no SSE field (an HTML page, plain text, NDJSON) ends
//     the stream with ErrNotAPI; the library would skip such lines and
//     report an empty stream;
//   - a "data: {"error":…}" line reaches the library as an ordinary data
//     line ("data: { "error":…", one space more), so the decoder reads it
//     like the errors that follow id and choices. The library would parse
//     it together with every non-data line seen before it (processLines'
//     error accumulator): after a keep-alive comment the error is
//     unreadable and RecvRaw returns nothing at all;
//   - a last line without its newline gets one: the library drops a line
//     that ends at EOF;
//   - the end is errBodyEnded, and a broken read an *Error.
type streamBody struct {
	p         *OpenAI
	r         *bufio.Reader
	close     func() error
	fail      func(error) error // describes a failed read
	out       []byte            // what Read hands out next
	lineStart bool              // the next byte from r begins a line
	end       error             // once r is used up or broken
}

func (b *streamBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.end != nil {
			return 0, b.end
		}
		b.next()
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *streamBody) Close() error { return b.close() }

// next takes the next line, or the next piece of a long one, from r.
func (b *streamBody) next() {
	line, err := b.r.ReadSlice('\n')
	if b.lineStart && len(line) > 0 {
		if line, b.end = b.check(line); b.end != nil {
			return
		}
	}
	if len(line) > 0 {
		b.lineStart = line[len(line)-1] == '\n'
	}
	b.out = line
	switch {
	case err == nil, errors.Is(err, bufio.ErrBufferFull):
	case errors.Is(err, io.EOF):
		if !b.lineStart {
			b.out = append(line[:len(line):len(line)], '\n')
		}
		b.end = errBodyEnded
	default:
		b.end = b.fail(err)
	}
}

var (
	errorData   = []byte(`{"error":`)
	errorEscape = []byte(`{ "error":`)
)

// check looks at the start of a line: an SSE field, a comment or a blank
// line passes; an in-band error is escaped; anything else is no event stream.
func (b *streamBody) check(line []byte) ([]byte, error) {
	s := bytes.TrimLeft(line, " \t")
	if len(s) == 0 || s[0] == '\r' || s[0] == '\n' || s[0] == ':' {
		return line, nil
	}
	field, value, _ := bytes.Cut(bytes.TrimRight(s, "\r\n"), []byte(":"))
	switch string(field) {
	case "data":
		// The library's errorPrefix: ^data:\s*{"error":
		v := bytes.TrimLeft(value, " \t\r\n\f")
		if bytes.HasPrefix(v, errorData) {
			at := bytes.Index(line, errorData)
			return append(append(append([]byte{}, line[:at]...), errorEscape...), line[at+len(errorData):]...), nil
		}
		return line, nil
	case "event", "id", "retry":
		return line, nil
	}
	sniff, _ := b.r.Peek(min(b.r.Buffered(), maxErrorBody))
	return nil, b.p.notAPI(http.StatusOK, append(append([]byte{}, line...), sniff...))
}
