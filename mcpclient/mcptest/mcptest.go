// Package mcptest is a real MCP server (the go-sdk's) for tests of MCP
// clients: a fixed set of tools covering each kind of result, served in
// process over HTTP, or over stdio by a test binary that re-executes itself.
//
// A test binary opts in by calling MaybeServe first thing in TestMain (or an
// init function); a test then starts os.Args[0] with Env(mode) to get a
// stdio server.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-bridge/acp-bridge/internal/procgroup"
)

// Modes of a stdio server started through Env.
const (
	ModeStdio    = "stdio"    // a well-behaved server
	ModeStubborn = "stubborn" // ignores SIGTERM and stdin EOF, and leaves a grandchild
	ModeFail     = "fail"     // writes an error to stderr and exits 2
	ModeHang     = "hang"     // never answers initialize
	modeSleep    = "sleep"    // the stubborn server's grandchild
)

const (
	envMode    = "MCPTEST_MODE"
	envPIDFile = "MCPTEST_PIDFILE"
)

// PNG is the image the image tool returns.
var PNG = []byte("\x89PNG\r\n\x1a\nfake")

// Env is the environment (NAME=value) that makes a test binary calling
// MaybeServe act as a stdio server in mode. pidFile, if not empty, receives
// the pids of the server and of any process it starts, one a line.
func Env(mode, pidFile string) []string {
	return []string{envMode + "=" + mode, envPIDFile + "=" + pidFile}
}

// MaybeServe serves MCP on stdio and exits if this process was started with
// Env; otherwise it returns at once.
func MaybeServe() {
	mode := os.Getenv(envMode)
	if mode == "" {
		return
	}
	writePID(os.Getpid())
	switch mode {
	case ModeFail:
		fmt.Fprintln(os.Stderr, "mcptest: bad configuration: no API token")
		os.Exit(2)
	case ModeHang:
		time.Sleep(time.Hour)
		os.Exit(0)
	case modeSleep:
		// Deaf to SIGTERM, so only a group SIGKILL stops it soon. Orphaned,
		// it lingers 30s (longer than any test waits, so tests still see
		// whether the group kill reached it), then goes, so a failed test
		// does not leave it behind for long.
		signal.Ignore(syscall.SIGTERM)
		parent := os.Getppid()
		for os.Getppid() == parent {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(30 * time.Second)
		os.Exit(0)
	case ModeStubborn:
		signal.Ignore(syscall.SIGTERM)
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), envMode+"="+modeSleep)
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "mcptest: grandchild:", err)
			os.Exit(1)
		}
	}
	fmt.Fprintln(os.Stderr, "mcptest: serving on stdio")
	err := NewServer(true).Run(context.Background(), &mcp.StdioTransport{})
	if mode == ModeStubborn {
		time.Sleep(time.Hour) // stdin closed: a polite server would exit now
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func writePID(pid int) {
	path := os.Getenv(envPIDFile)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintln(f, pid)
	f.Close()
}

// PIDs reads the pids written to pidFile.
func PIDs(pidFile string) []int {
	b, _ := os.ReadFile(pidFile)
	var pids []int
	for _, l := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(l); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// Alive reports whether pid is a running process (a zombie is not).
func Alive(pid int) bool {
	if !procgroup.Exists(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: the signal check is all we have
	}
	// The state follows the parenthesized command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

type textIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type msIn struct {
	MS int `json:"ms" jsonschema:"milliseconds to wait"`
}

type nameIn struct {
	Name string `json:"name" jsonschema:"the new tool's name"`
}

// NewServer returns the test server. Its tools:
//   - echo {text}: "echo: <text>"
//   - image: an image/png (PNG)
//   - resource: an embedded text resource and a resource link
//   - fail: a tool error "it broke"
//   - slow {ms}: waits, or until cancelled, then "slept"
//   - count {n}: declared with a raw schema (n: integer >= 1)
//   - add_tool {name}: adds a tool of that name (tools/list_changed)
//   - crash: the process exits with status 3 (only when canCrash)
type askIn struct {
	URL bool `json:"url,omitempty"`
}

func NewServer(canCrash bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1.0.0"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask the user for a colour (form elicitation), or to visit a page (url true)."},
		func(_ context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
			// The multi round-trip form (SEP-2322): the first call returns
			// what it needs; the client asks and calls again with answers.
			if r, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult); ok {
				b, _ := json.Marshal(r.Content)
				return text("answer: " + r.Action + " " + string(b)), nil, nil
			}
			p := &mcp.ElicitParams{Message: "Which colour?", RequestedSchema: map[string]any{"type": "object",
				"properties": map[string]any{"colour": map[string]any{"type": "string", "enum": []string{"red", "blue"}}}, "required": []string{"colour"}}}
			if in.URL {
				p = &mcp.ElicitParams{Mode: "url", Message: "Sign in, please.", URL: "https://example.com/sign-in", ElicitationID: "el-1"}
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": p}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Return a picture.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: PNG, MIMEType: "image/png"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "resource", Description: "Return a resource and a link."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "remember the milk"}},
				&mcp.ResourceLink{URI: "file:///big.bin", Name: "big.bin"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			r := text("it broke")
			r.IsError = true
			return r, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Wait a while."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in msIn) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	s.AddTool(&mcp.Tool{Name: "count", Description: "Count to n.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ N int }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if in.N < 1 {
				// The server validates its own input (the client does not).
				r := text(fmt.Sprintf("invalid arguments: n must be at least 1, got %d", in.N))
				r.IsError = true
				return r, nil
			}
			var b strings.Builder
			for i := 1; i <= in.N; i++ {
				fmt.Fprintf(&b, "%d ", i)
			}
			return text(strings.TrimSpace(b.String())), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Add a tool."},
		func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
			name := in.Name
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Added at run time."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text("I am " + name), nil, nil
				})
			return text("added " + name), nil, nil
		})
	if canCrash {
		mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit the server process."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "mcptest: crashing as asked")
				os.Exit(3)
				return nil, nil, nil
			})
	}
	return s
}

// HTTP serves a fresh test server over streamable HTTP (sse=false) or the
// older SSE transport. Every request must carry the header want (if not
// empty, "Name: value"), else it is refused with 401.
func HTTP(sse bool, want string) *httptest.Server {
	s := NewServer(false)
	var h http.Handler
	if sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	name, value, _ := strings.Cut(want, ":")
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if want != "" && r.Header.Get(name) != strings.TrimSpace(value) {
			http.Error(w, "missing "+name, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
}
