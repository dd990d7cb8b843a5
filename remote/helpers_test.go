package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
)

// never bounds waits that end unless something is broken: long enough
// that a loaded machine is only late, never wrong.
const never = 30 * time.Second

// fakeAgent is a connection's agent in these tests: sessions are names, a
// prompt streams one chunk, asks permission, and ends with the outcome's
// name as its stop reason's note (kept in outcomes).
type fakeAgent struct {
	h      *agents
	client acp.Client
}

type agents struct {
	mu        sync.Mutex
	sessions  atomic.Int64
	outcomes  []string
	shutdowns atomic.Int64
	release   chan struct{} // a prompt "wait" waits for it after its permission
	turnDone  chan string   // each prompt's outcome as it returns
	// A "flood" prompt says floodChunks chunks of 10 kB (default 1,000),
	// calling sample every 100; floodDone counts the floods ended.
	floodChunks int
	sample      func()
	floodDone   atomic.Int64
}

func newAgents() *agents {
	return &agents{release: make(chan struct{}), turnDone: make(chan string, 16)}
}

func (h *agents) factory(c acp.Client) Agent { return &fakeAgent{h: h, client: c} }

func (a *fakeAgent) Initialize(context.Context, *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	return &acp.InitializeResponse{ProtocolVersion: 1, AgentCapabilities: acp.AgentCapabilities{LoadSession: true}}, nil
}

func (a *fakeAgent) Authenticate(context.Context, *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	return &acp.AuthenticateResponse{}, nil
}

func (a *fakeAgent) NewSession(_ context.Context, req *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	return &acp.NewSessionResponse{SessionID: fmt.Sprintf("s%d", a.h.sessions.Add(1))}, nil
}

func (a *fakeAgent) Prompt(ctx context.Context, req *acp.PromptRequest) (*acp.PromptResponse, error) {
	acp.Admitted(ctx)
	text := req.Prompt[0].Text
	if strings.HasPrefix(text, "flood") {
		n := a.h.floodChunks
		if n == 0 {
			n = 1000
		}
		for i := range n {
			a.client.SessionUpdate(ctx, req.SessionID, acp.AgentMessageChunk{Content: acp.TextBlock(strings.Repeat("x", 10000))})
			if a.h.sample != nil && i%100 == 0 {
				a.h.sample()
			}
		}
		a.h.floodDone.Add(1)
		return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
	}
	a.client.SessionUpdate(ctx, req.SessionID, acp.AgentMessageChunk{Content: acp.TextBlock("thinking about " + text)})
	resp, err := a.client.RequestPermission(ctx, &acp.RequestPermissionRequest{
		SessionID: req.SessionID,
		ToolCall:  acp.ToolCallUpdate{ToolCallID: "call-1"},
		Options:   []acp.PermissionOption{{OptionID: "allow", Name: "Allow", Kind: "allow_once"}},
	})
	outcome := "error"
	if err == nil {
		outcome = resp.Outcome.Outcome + resp.Outcome.OptionID
	}
	if text == "wait" {
		<-a.h.release
	}
	a.h.mu.Lock()
	a.h.outcomes = append(a.h.outcomes, outcome)
	a.h.mu.Unlock()
	select {
	case a.h.turnDone <- outcome:
	default: // nobody waits for this many
	}
	return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
}

func (a *fakeAgent) Cancel(context.Context, *acp.CancelNotification) {}

func (a *fakeAgent) Shutdown() { a.h.shutdowns.Add(1) }

// testServer is a Server on a loopback httptest server.
type testServer struct {
	*Server
	URL    string
	agents *agents
	root   string
}

func newTestServer(t *testing.T, o Options) *testServer {
	t.Helper()
	h := newAgents()
	root := t.TempDir()
	o.NewAgent = h.factory
	if o.Roots == nil {
		o.Roots = []string{root}
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	cfg, l := s.HTTPServer(hs.Listener, 0)
	hs.Config, hs.Listener = cfg, l
	hs.Start()
	t.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	return &testServer{Server: s, URL: hs.URL, agents: h, root: root}
}

// rpc is one JSON-RPC message as the tests read it.
type rpc struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *acp.Error      `json:"error,omitempty"`
}

// client is a hand-rolled Streamable HTTP client: the tests choose every
// header, which the SDK clients do not let them.
type client struct {
	t     *testing.T
	url   string
	path  string // default Path
	token string
	hc    *http.Client // default http.DefaultClient
	conn  string
	msgs  chan rpc // everything every stream delivered
	mu    sync.Mutex
	open  map[string]bool
}

func newClient(t *testing.T, url, token string) *client {
	return &client{t: t, url: url, token: token, msgs: make(chan rpc, 1024), open: map[string]bool{}}
}

func (c *client) req(method, body string, hdr map[string]string) *http.Response {
	c.t.Helper()
	path := c.path
	if path == "" {
		path = Path
	}
	r, err := http.NewRequestWithContext(c.t.Context(), method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.conn != "" {
		r.Header.Set(HeaderConnectionID, c.conn)
	}
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		if v == "" {
			r.Header.Del(k)
			continue
		}
		r.Header.Set(k, v)
	}
	hc := c.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(r)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func status(t *testing.T, resp *http.Response) int {
	t.Helper()
	resp.Body.Close()
	return resp.StatusCode
}

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`

// initialize opens the connection and its stream.
func (c *client) initialize() {
	c.t.Helper()
	resp := c.req("POST", initBody, nil)
	defer resp.Body.Close()
	var m rpc
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 || m.Error != nil {
		c.t.Fatalf("initialize: %d %v %+v", resp.StatusCode, err, m)
	}
	c.conn = resp.Header.Get(HeaderConnectionID)
	if c.conn == "" {
		c.t.Fatal("initialize: no " + HeaderConnectionID)
	}
	c.stream("")
}

// stream opens a connection ("") or session stream, which feeds c.msgs.
func (c *client) stream(session string) {
	c.t.Helper()
	hdr := map[string]string{"Accept": "text/event-stream"}
	if session != "" {
		hdr[HeaderSessionID] = session
	}
	resp := c.req("GET", "", hdr)
	if resp.StatusCode != 200 {
		c.t.Fatalf("GET stream %q: %d", session, status(c.t, resp))
	}
	c.mu.Lock()
	c.open[session] = true
	c.mu.Unlock()
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m rpc
			if json.Unmarshal([]byte(line), &m) == nil {
				c.msgs <- m
			}
		}
	}()
}

// post sends one message; the status must be 202.
func (c *client) post(session, body string) {
	c.t.Helper()
	hdr := map[string]string{}
	if session != "" {
		hdr[HeaderSessionID] = session
	}
	if code := status(c.t, c.req("POST", body, hdr)); code != http.StatusAccepted {
		c.t.Fatalf("POST %s: %d, want 202", body, code)
	}
}

// next returns the next message matching f.
func (c *client) next(what string, f func(rpc) bool) rpc {
	c.t.Helper()
	deadline := time.After(never)
	for {
		select {
		case m := <-c.msgs:
			if f(m) {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no %s within %s", what, never)
		}
	}
}

func answerTo(id string) func(rpc) bool {
	return func(m rpc) bool { return m.Method == "" && string(m.ID) == id }
}

func method(name string) func(rpc) bool { return func(m rpc) bool { return m.Method == name } }

// newSession opens a session in dir and its stream.
func (c *client) newSession(dir string) string {
	c.t.Helper()
	sid := c.newSessionUnread(dir)
	c.stream(sid)
	return sid
}

// newSessionUnread opens a session in dir and not its stream: what the
// session says waits in its mailbox (or for a stream the test opens).
func (c *client) newSessionUnread(dir string) string {
	c.t.Helper()
	c.post("", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":`+quote(dir)+`,"mcpServers":[]}}`)
	m := c.next("session/new answer", answerTo("1"))
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.SessionID == "" {
		c.t.Fatalf("session/new: %+v", m)
	}
	return res.SessionID
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitFor polls cond until it holds (within never).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(never)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, never)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
