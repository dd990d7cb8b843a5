package mcpclient_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/mcpclient"
	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	os.Exit(m.Run())
}

// stdioServer is the test binary itself serving MCP on stdio.
func stdioServer(t testing.TB, name, mode string) (mcpclient.Server, string) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	s := mcpclient.Server{Name: name, Command: os.Args[0], Dir: t.TempDir()}
	for _, kv := range mcptest.Env(mode, pidFile) {
		k, v, _ := strings.Cut(kv, "=")
		s.Env = append(s.Env, mcpclient.EnvVar{Name: k, Value: v})
	}
	return s, pidFile
}

func connect(t *testing.T, s mcpclient.Server, o *mcpclient.Options) *mcpclient.Conn {
	t.Helper()
	c, err := mcpclient.Connect(t.Context(), s, o)
	if err != nil {
		t.Fatalf("connect %s: %v", s.Name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func tool(t *testing.T, c *mcpclient.Conn, name string) *registry.Def {
	t.Helper()
	for _, d := range c.Tools() {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no tool %s among %v", name, names(c.Tools()))
	return nil
}

func names(ds []*registry.Def) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	slices.Sort(out)
	return out
}

// call runs a tool the way the pipeline does: validate, then run.
func call(t *testing.T, d *registry.Def, args string) (registry.Result, error) {
	t.Helper()
	if err := d.Validate(json.RawMessage(args)); err != nil {
		return registry.Result{}, err
	}
	return d.Run(t.Context(), &registry.Call{ID: "c1", Name: d.Name, Args: json.RawMessage(args)})
}

// Every transport reaches the same server and its tools behave the same:
// names, schemas, each kind of result, tool errors, argument validation.
func TestTransports(t *testing.T) {
	// Cleanups run last-in first-out: connections close before their servers.
	httpSrv := mcptest.HTTP(false, "Authorization: Bearer s3cret")
	t.Cleanup(httpSrv.Close)
	sseSrv := mcptest.HTTP(true, "X-Api-Key: k")
	t.Cleanup(sseSrv.Close)
	stdio, _ := stdioServer(t, "local files", mcptest.ModeStdio)

	cases := []struct {
		srv    mcpclient.Server
		prefix string
	}{
		{stdio, "mcp__local_files__"},
		{mcpclient.Server{Name: "remote", Type: mcpclient.HTTP, URL: httpSrv.URL,
			Headers: []mcpclient.Header{{Name: "Authorization", Value: "Bearer s3cret"}}}, "mcp__remote__"},
		{mcpclient.Server{Name: "old", Type: mcpclient.SSE, URL: sseSrv.URL,
			Headers: []mcpclient.Header{{Name: "X-Api-Key", Value: "k"}}}, "mcp__old__"},
	}
	for _, tc := range cases {
		t.Run(tc.srv.Type+tc.srv.Name, func(t *testing.T) {
			c := connect(t, tc.srv, nil)
			var want []string
			for _, n := range []string{"add_tool", "ask", "count", "echo", "fail", "image", "resource", "slow"} {
				want = append(want, tc.prefix+n)
			}
			if tc.srv.Type == "" {
				want = append(want, tc.prefix+"crash")
				slices.Sort(want)
			}
			if got := names(c.Tools()); !slices.Equal(got, want) {
				t.Fatalf("tools:\n got %v\nwant %v", got, want)
			}

			echo := tool(t, c, tc.prefix+"echo")
			var schema struct {
				Type       string
				Properties map[string]struct{ Description string }
				Required   []string
			}
			if err := json.Unmarshal(echo.Parameters(), &schema); err != nil {
				t.Fatal(err)
			}
			if schema.Type != "object" || schema.Properties["text"].Description != "the text to echo" || !slices.Equal(schema.Required, []string{"text"}) {
				t.Errorf("echo schema not the server's: %s", echo.Parameters())
			}
			if p := echo.Permission(&registry.Call{}); p == nil || p.Key != "mcp:"+tc.srv.Name+":echo" {
				t.Errorf("echo must ask permission, keyed by server and tool; got %+v", p)
			}

			r, err := call(t, echo, `{"text":"hi"}`)
			if err != nil || r.Text() != "echo: hi" {
				t.Errorf("echo: %q, %v", r.Text(), err)
			}
			// The server's readOnlyHint becomes the tool's declared fact.
			if !tool(t, c, tc.prefix+"image").Facts.ReadOnly || echo.Facts.ReadOnly {
				t.Errorf("readOnlyHint: image read-only %v, echo read-only %v; want true, false",
					tool(t, c, tc.prefix+"image").Facts.ReadOnly, echo.Facts.ReadOnly)
			}
			r, err = call(t, tool(t, c, tc.prefix+"image"), `{}`)
			if err != nil || len(r.Content) != 1 || r.Content[0].Type != "image" || r.Content[0].MimeType != "image/png" ||
				r.Content[0].Data != base64.StdEncoding.EncodeToString(mcptest.PNG) {
				t.Errorf("image: %+v, %v", r.Content, err)
			}
			r, err = call(t, tool(t, c, tc.prefix+"resource"), `{}`)
			wantRes := []registry.Content{
				{Type: "resource", URI: "file:///notes.txt", MimeType: "text/plain", Text: "remember the milk"},
				{Type: "resource_link", URI: "file:///big.bin", Name: "big.bin"},
			}
			if err != nil || !slices.Equal(r.Content, wantRes) {
				t.Errorf("resource: %+v, %v", r.Content, err)
			}
			if !strings.Contains(r.Text(), "remember the milk") || !strings.Contains(r.Text(), "file:///big.bin") {
				t.Errorf("the model does not read the resource: %q", r.Text())
			}
			_, err = call(t, tool(t, c, tc.prefix+"fail"), `{}`)
			var te *registry.Error
			if !errorsAs(err, &te) || te.Code != "MCP_TOOL_ERROR" || te.Message != "it broke" {
				t.Errorf("fail: %v", err)
			}
			count := tool(t, c, tc.prefix+"count")
			if r, err := call(t, count, `{"n":3}`); err != nil || r.Text() != "1 2 3" {
				t.Errorf("count: %q, %v", r.Text(), err)
			}
			// The server validates its own input: the arguments reach it
			// unchecked, and its refusal is the call's failure.
			if _, err := call(t, count, `{"n":0}`); !errorsAs(err, &te) || te.Code != "MCP_TOOL_ERROR" || !strings.Contains(te.Message, "n must be at least 1") {
				t.Errorf("count n=0: %v, want the server's refusal", err)
			}
		})
	}
}

func errorsAs(err error, te **registry.Error) bool {
	e, ok := err.(*registry.Error)
	if ok {
		*te = e
	}
	return ok
}

// tools/list_changed reaches OnToolsChanged with the new tool defined.
func TestToolListChanged(t *testing.T) {
	srv := mcptest.HTTP(false, "")
	t.Cleanup(srv.Close)
	stdio, _ := stdioServer(t, "s", mcptest.ModeStdio)
	for _, s := range []mcpclient.Server{stdio, {Name: "h", Type: mcpclient.HTTP, URL: srv.URL}} {
		changed := make(chan []string, 4)
		c := connect(t, s, &mcpclient.Options{OnToolsChanged: func(c *mcpclient.Conn) { changed <- names(c.Tools()) }})
		prefix := "mcp__" + s.Name + "__"
		if _, err := call(t, tool(t, c, prefix+"add_tool"), `{"name":"fresh"}`); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-changed:
			if !slices.Contains(got, prefix+"fresh") {
				t.Errorf("%s: after the change: %v", s.Name, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no tools change reported", s.Name)
		}
		if r, err := call(t, tool(t, c, prefix+"fresh"), `{}`); err != nil || r.Text() != "I am fresh" {
			t.Errorf("%s: fresh: %q %v", s.Name, r.Text(), err)
		}
	}
}

// A server that dies is reported once, with its exit status and stderr,
// and its tools then fail as calls, not as panics or hangs.
func TestServerDeathReported(t *testing.T) {
	s, pidFile := stdioServer(t, "s", mcptest.ModeStdio)
	var mu sync.Mutex
	var exits []string
	exited := make(chan struct{})
	c := connect(t, s, &mcpclient.Options{OnExit: func(_ *mcpclient.Conn, err error) {
		mu.Lock()
		exits = append(exits, err.Error())
		mu.Unlock()
		close(exited)
	}})
	_, _ = call(t, tool(t, c, "mcp__s__crash"), `{}`)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("death not reported")
	}
	<-c.Done()
	mu.Lock()
	if len(exits) != 1 || !strings.Contains(exits[0], "exit status 3") || !strings.Contains(exits[0], "crashing as asked") {
		t.Errorf("exit reports: %q", exits)
	}
	mu.Unlock()
	if _, err := call(t, tool(t, c, "mcp__s__echo"), `{"text":"x"}`); err == nil {
		t.Error("a call to a dead server succeeded")
	}
	for _, pid := range mcptest.PIDs(pidFile) {
		if mcptest.Alive(pid) {
			t.Errorf("pid %d still alive", pid)
		}
	}
	c.Close() // no second report
	mu.Lock()
	if len(exits) != 1 {
		t.Errorf("reports after Close: %q", exits)
	}
	mu.Unlock()
}

// Close stops even a server that ignores stdin EOF and SIGTERM, and the
// process it started, within the grace steps.
func TestCloseKillsStubbornServerAndItsChildren(t *testing.T) {
	s, pidFile := stdioServer(t, "s", mcptest.ModeStubborn)
	c := connect(t, s, &mcpclient.Options{StopGrace: 200 * time.Millisecond, OnExit: func(_ *mcpclient.Conn, err error) {
		t.Errorf("Close reported as a death: %v", err)
	}})
	pids := mcptest.PIDs(pidFile)
	for wait := time.Now().Add(5 * time.Second); len(pids) < 2 && time.Now().Before(wait); pids = mcptest.PIDs(pidFile) {
		time.Sleep(10 * time.Millisecond) // the grandchild writes its pid once started
	}
	if len(pids) != 2 {
		t.Fatalf("want the server and its child, got pids %v", pids)
	}
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %s", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for mcptest.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if mcptest.Alive(pid) {
			t.Errorf("pid %d survived Close", pid)
		}
	}
}

func TestConnectFailures(t *testing.T) {
	fail, _ := stdioServer(t, "f", mcptest.ModeFail)
	hang, hangPIDs := stdioServer(t, "h", mcptest.ModeHang)
	// Only the hung server gets a short connect timeout: the others must
	// fail for their own reason, however slowly a loaded machine starts them.
	cases := []struct {
		name    string
		srv     mcpclient.Server
		timeout time.Duration
		want    string
	}{
		{"no such command", mcpclient.Server{Name: "x", Command: "/does/not/exist"}, 0, "no such file"},
		{"exits with an error", fail, 0, "no API token"},
		{"never answers", hang, 500 * time.Millisecond, "no answer to initialize within 500ms"},
		{"http refused", mcpclient.Server{Name: "x", Type: mcpclient.HTTP, URL: "http://127.0.0.1:1/mcp"}, 0, "refused"},
		{"bad transport", mcpclient.Server{Name: "x", Type: "acp"}, 0, "not supported"},
		{"no name", mcpclient.Server{Command: "x"}, 0, "without a name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := mcpclient.Connect(t.Context(), tc.srv, &mcpclient.Options{ConnectTimeout: tc.timeout, StopGrace: 100 * time.Millisecond})
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
	for _, pid := range mcptest.PIDs(hangPIDs) {
		if mcptest.Alive(pid) {
			t.Errorf("hung server %d left running", pid)
		}
	}
}

// A server that never answers a call does not hold the turn: the pipeline's
// timeout policy fails the call with TOOL_TIMEOUT once CallTimeout passes.
func TestCallTimeout(t *testing.T) {
	old := mcpclient.CallTimeout
	mcpclient.CallTimeout = 200 * time.Millisecond
	t.Cleanup(func() { mcpclient.CallTimeout = old })
	srv := mcptest.HTTP(false, "")
	t.Cleanup(srv.Close)
	c := connect(t, mcpclient.Server{Name: "remote", Type: mcpclient.HTTP, URL: srv.URL}, nil)
	var slow *registry.Def
	for _, d := range c.Tools() {
		if d.Name == "mcp__remote__slow" {
			slow = d
		}
	}
	if slow == nil || slow.Timeout != 200*time.Millisecond {
		t.Fatalf("slow tool %+v", slow)
	}
	p := pipeline.New(&pipeline.Options{Middleware: []pipeline.Middleware{pipeline.Timeout()}})
	start := time.Now()
	// The server sleeps 3 s (the test server's cleanup waits for it).
	r := p.Execute(t.Context(), slow, &registry.Call{ID: "c1", Name: slow.Name, Args: json.RawMessage(`{"ms":3000}`)})
	if r.Code != "TOOL_TIMEOUT" || !strings.Contains(r.Text(), "timed out, stopped after 200ms: the mcp__remote__slow tool's own limit") {
		t.Fatalf("result %+v", r)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the timed-out call returned after %v: it waited for the server", took)
	}
}
