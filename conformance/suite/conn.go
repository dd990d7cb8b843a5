package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// Process is one launched agent: the suite writes its stdin and reads its
// stdout; Stderr returns what it logged so far, for reports.
type Process struct {
	Stdin  io.WriteCloser
	Stdout io.Reader
	Stderr func() string
	Wait   func() error // after Stdin is closed
	Kill   func()
}

// Launcher starts a fresh agent process. Every run of the suite gets its own
// process, so one broken check cannot poison the next.
type Launcher func(ctx context.Context) (*Process, error)

// Command returns a Launcher that executes argv with the environment env
// added to the suite's own.
func Command(argv []string, env []string) Launcher {
	return func(ctx context.Context) (*Process, error) {
		if len(argv) == 0 {
			return nil, errors.New("no agent command")
		}
		argv := absCommand(argv)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), env...)
		stderr := &tailBuffer{max: 64 << 10}
		cmd.Stderr = stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", argv[0], err)
		}
		return &Process{
			Stdin: stdin, Stdout: stdout, Stderr: stderr.String,
			Wait: cmd.Wait,
			Kill: func() { _ = cmd.Process.Kill() },
		}, nil
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// handler answers the agent's requests: the emulated editor.
type handler func(ctx context.Context, m *Msg) (any, *RPCError)

// conn is the client side of one agent process.
type conn struct {
	p     *Process
	trace *Trace
	serve handler
	ctx   context.Context
	stop  context.CancelFunc

	wmu  sync.Mutex
	next int

	pmu     sync.Mutex
	pending map[string]chan *Msg

	readDone chan struct{}
	handlers sync.WaitGroup
}

func dial(ctx context.Context, launch Launcher, serve handler) (*conn, error) {
	p, err := launch(ctx)
	if err != nil {
		return nil, err
	}
	cctx, stop := context.WithCancel(ctx)
	c := &conn{p: p, trace: newTrace(), serve: serve, ctx: cctx, stop: stop,
		pending: map[string]chan *Msg{}, readDone: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

// readLoop records every stdout line and routes it: responses to their
// waiting request, requests to the editor, notifications to the trace only.
func (c *conn) readLoop() {
	defer close(c.readDone)
	r := bufio.NewReaderSize(c.p.Stdout, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			e := c.trace.add(acpschema.FromAgent, line, false)
			if m := e.Msg; m != nil {
				switch {
				case m.IsResponse() && hasID(m.ID):
					c.pmu.Lock()
					ch := c.pending[idKey(m.ID)]
					delete(c.pending, idKey(m.ID))
					c.pmu.Unlock()
					if ch != nil {
						ch <- m
					}
				case m.IsRequest():
					c.handlers.Add(1)
					go c.answer(m)
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func (c *conn) answer(m *Msg) {
	defer c.handlers.Done()
	res, rerr := c.serve(c.ctx, m)
	out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		out["error"] = rerr
	} else {
		if res == nil {
			res = struct{}{}
		}
		out["result"] = res
	}
	_ = c.send(out, false)
}

// send writes one message as one line.
func (c *conn) send(v any, deliberate bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.sendRaw(b, deliberate)
}

func (c *conn) sendRaw(line []byte, deliberate bool) error {
	_, err := c.sendEntry(line, deliberate)
	return err
}

// sendEntry writes a line and returns its trace entry, recorded before the
// write so nothing the agent answers can precede it in the trace.
func (c *conn) sendEntry(line []byte, deliberate bool) (*Entry, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	e := c.trace.add(acpschema.ToAgent, line, deliberate)
	_, err := c.p.Stdin.Write(append(append([]byte(nil), line...), '\n'))
	return e, err
}

// sent is a request on its way: its id, its trace entry and where its
// response will arrive.
type sent struct {
	id  string
	seq int
	ch  <-chan *Msg
}

// request sends a request with the suite's next id.
func (c *conn) request(method string, params any, deliberate bool) (sent, error) {
	c.wmu.Lock()
	c.next++
	id := strconv.Itoa(c.next)
	c.wmu.Unlock()
	m := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		return sent{}, err
	}
	return c.requestLine(json.RawMessage(id), b, deliberate)
}

// requestLine sends a request line (the suite's, or a scenario's with its
// own id) and registers for its response.
func (c *conn) requestLine(id json.RawMessage, line []byte, deliberate bool) (sent, error) {
	ch := make(chan *Msg, 1)
	c.pmu.Lock()
	c.pending[idKey(id)] = ch
	c.pmu.Unlock()
	e, err := c.sendEntry(line, deliberate)
	if err != nil {
		return sent{}, err
	}
	return sent{id: idKey(id), seq: e.Seq, ch: ch}, nil
}

// errNoResponse: the agent did not answer in time or exited.
var errNoResponse = errors.New("no response")

// await waits for a response on ch.
func (c *conn) await(ctx context.Context, ch <-chan *Msg, timeout time.Duration) (*Msg, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		return m, nil
	case <-t.C:
		return nil, fmt.Errorf("%w within %v", errNoResponse, timeout)
	case <-c.readDone:
		select {
		case m := <-ch:
			return m, nil
		default:
		}
		return nil, fmt.Errorf("%w: the agent closed stdout", errNoResponse)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// call sends a request and waits for its response.
func (c *conn) call(ctx context.Context, method string, params any, timeout time.Duration) (*Msg, error) {
	return c.callAs(ctx, method, params, timeout, false)
}

// callAs is call with the deliberate mark: a message outside the schema on
// purpose, which the client-side schema self-check skips.
func (c *conn) callAs(ctx context.Context, method string, params any, timeout time.Duration, deliberate bool) (*Msg, error) {
	req, err := c.request(method, params, deliberate)
	if err != nil {
		return nil, err
	}
	return c.await(ctx, req.ch, timeout)
}

func (c *conn) notify(method string, params any, deliberate bool) error {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return c.send(m, deliberate)
}

// waitFor blocks until pred holds for the trace, the timeout passes (false),
// or the agent closes stdout.
func (c *conn) waitFor(ctx context.Context, timeout time.Duration, pred func([]*Entry) bool) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		es, changed := c.trace.wait()
		if pred(es) {
			return true
		}
		select {
		case <-changed:
		case <-t.C:
			return false
		case <-c.readDone:
			return pred(c.trace.Entries())
		case <-ctx.Done():
			return false
		}
	}
}

// quiet waits until nothing arrives for d, or max passes.
func (c *conn) quiet(ctx context.Context, d, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		n := c.trace.Len()
		if !c.waitFor(ctx, d, func(es []*Entry) bool { return len(es) > n }) {
			return
		}
	}
}

// close ends the process: stdin is closed, then it has grace to exit before
// it is killed. It reports whether the agent exited on its own.
func (c *conn) close(grace time.Duration) (exited bool, waitErr error) {
	_ = c.p.Stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.p.Wait() }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case waitErr = <-done:
		exited = true
	case <-t.C:
		c.p.Kill()
		waitErr = <-done
	}
	c.stop()
	<-c.readDone
	c.handlers.Wait()
	return exited, waitErr
}

// absCommand makes a relative agent path with a slash absolute, so it does
// not depend on any directory the process is started in.
func absCommand(argv []string) []string {
	if len(argv) == 0 || !strings.ContainsRune(argv[0], filepath.Separator) || filepath.IsAbs(argv[0]) {
		return argv
	}
	out := append([]string(nil), argv...)
	if a, err := filepath.Abs(argv[0]); err == nil {
		out[0] = a
	}
	return out
}
