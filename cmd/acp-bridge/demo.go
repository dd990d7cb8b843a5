package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
)

//go:embed demo/script.json
var demoScript []byte

var demoFiles = map[string]string{
	"main.go": `package main

import (
	"fmt"
	"os"
)

func main() {
	names := os.Args[1:]
	if len(names) == 0 {
		names = []string{"world"}
	}
	for _, n := range names {
		fmt.Printf("Hello, %s!\n", n)
	}
}
`,
	"NOTES.md": "# Notes\n\n- Next: a --shout flag that upper-cases the greeting.\n- Keep it dependency-free.\n",
}

// runDemo runs the bridge in-process against a scripted model and an
// in-process client, printing what an editor would show.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, code, ok := startConfig("acp-bridge demo", args, stdout, stderr)
	if !ok {
		return code
	}
	if slices.ContainsFunc(args, func(a string) bool {
		return a == "--model" || a == "-model" || strings.HasPrefix(a, "--model=") || strings.HasPrefix(a, "-model=")
	}) {
		// The demo's turns are scripted (its prompts, a cancel on cue): a real
		// model would not follow them. Say so rather than ignore the flag.
		printStartError(stderr, "acp-bridge demo", usageError{errors.New("the demo always runs its own scripted model, offline; --model is for acp-bridge itself (acp-bridge --model NAME)")})
		return 2
	}
	if cfg.logLevel == "" {
		cfg.logLevel = "warn" // keep the demo's screen for the session itself
	}
	logger, closeLog, err := newLogger(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "acp-bridge: %v\n", err)
		return 2
	}
	defer closeLog()

	dir, err := os.MkdirTemp("", "acp-bridge-demo-")
	if err != nil {
		fmt.Fprintf(stderr, "acp-bridge demo: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	for name, body := range demoFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			fmt.Fprintf(stderr, "acp-bridge demo: %v\n", err)
			return 1
		}
	}
	// The demo's sessions are its own: keep them out of the user's state.
	if cfg.stateDir, err = os.MkdirTemp("", "acp-bridge-demo-state-"); err != nil {
		fmt.Fprintf(stderr, "acp-bridge demo: %v\n", err)
		return 1
	}
	defer os.RemoveAll(cfg.stateDir)
	// The demo runs its own model; the configured ones are not used.
	cfg.model, cfg.modelSet, cfg.baseURL, cfg.providers = "", false, "", nil
	opts, err := agentOptions(cfg, logger)
	if err != nil {
		printStartError(stderr, "acp-bridge demo", err)
		return 2
	}
	// Always offline: the demo must run anywhere, whatever the config says.
	script, err := model.ParseScript(demoScript)
	if err != nil {
		fmt.Fprintf(stderr, "acp-bridge demo: %v\n", err)
		return 1
	}
	opts.Models, opts.DefaultModel = nil, ""
	opts.Model, opts.ModelName = script, "demo-script"

	// The editor side and the agent side, joined by two pipes.
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan struct{})
	go func() {
		defer close(served)
		serve(ctx, opts, toAgentR, toClientW, logger)
		toClientW.Close()
	}()

	p := &demoPrinter{w: stdout, cwd: dir}
	client := jsonrpc2.NewConn(ctx, jsonrpc2.NewPlainObjectStream(pipeRWC{toClientR, toAgentW}), p,
		jsonrpc2.SetLogger(slogPrintf{logger}))
	err = p.script(ctx, client, dir)
	client.Close()
	toAgentW.Close()
	<-served
	if err != nil {
		fmt.Fprintf(stderr, "acp-bridge demo: %v\n", err)
		return 1
	}
	return 0
}

type slogPrintf struct {
	l interface{ Debug(string, ...any) }
}

func (s slogPrintf) Printf(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }

type pipeRWC struct {
	io.Reader
	io.WriteCloser
}

// demoPrinter is the in-process editor: it drives the session and renders
// every update as text.
type demoPrinter struct {
	w    io.Writer
	cwd  string
	mu   sync.Mutex
	mode string // the kind of the last streamed chunk, to break lines between kinds
}

func (p *demoPrinter) script(ctx context.Context, c *jsonrpc2.Conn, dir string) error {
	var init acp.InitializeResponse
	err := c.Call(ctx, acp.MethodInitialize, map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs": map[string]bool{"readTextFile": false, "writeTextFile": false}, "terminal": false,
			"_meta": map[string]bool{"terminal_output": true},
		},
		"clientInfo": map[string]string{"name": "acp-bridge-demo", "version": agentVersion()},
	}, &init)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	p.line("▸ initialize → %s %s, protocol version %d", init.AgentInfo.Name, init.AgentInfo.Version, init.ProtocolVersion)

	var sess acp.NewSessionResponse
	if err := c.Call(ctx, acp.MethodSessionNew, acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}}, &sess); err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	p.line("▸ session/new → session %s in %s", sess.SessionID, dir)

	prompt := func(text string, cancelAfter time.Duration) error {
		p.line("\n▸ you: %s", text)
		if cancelAfter > 0 {
			time.AfterFunc(cancelAfter, func() {
				p.line("\n▸ (you press Stop: session/cancel)")
				_ = c.Notify(ctx, acp.MethodSessionCancel, acp.CancelNotification{SessionID: sess.SessionID})
			})
		}
		var resp acp.PromptResponse
		if err := c.Call(ctx, acp.MethodSessionPrompt, acp.PromptRequest{SessionID: sess.SessionID,
			Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &resp); err != nil {
			return fmt.Errorf("session/prompt: %w", err)
		}
		p.line("\n▸ turn ended: stopReason %q", resp.StopReason)
		return nil
	}
	if err := prompt("What does main.go do?", 0); err != nil {
		return err
	}
	return prompt("Now write me a long essay about it.", 600*time.Millisecond)
}

// Handle renders the agent's notifications and answers its requests.
func (p *demoPrinter) Handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Params == nil {
		return
	}
	switch req.Method {
	case acp.MethodSessionUpdate:
		var n acp.SessionNotification
		if err := json.Unmarshal(*req.Params, &n); err != nil {
			p.line("  (undecodable update: %v)", err)
			return
		}
		p.update(n.Update)
	case acp.MethodSessionRequestPermission:
		var r acp.RequestPermissionRequest
		_ = json.Unmarshal(*req.Params, &r)
		title := r.ToolCall.ToolCallID
		if r.ToolCall.Title != nil {
			title = *r.ToolCall.Title
		}
		p.line("  ? permission asked for %q; the demo answers %q", title, "allow once")
		choice := ""
		for _, o := range r.Options {
			if o.Kind == acp.AllowOnce {
				choice = o.OptionID
				break
			}
		}
		_ = c.Reply(ctx, req.ID, acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: choice}})
	default:
		if !req.Notif {
			_ = c.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: acp.CodeMethodNotFound, Message: "the demo client does not serve " + req.Method})
		}
	}
}

func (p *demoPrinter) update(u acp.Update) {
	switch u := u.(type) {
	case *acp.AgentThoughtChunk:
		p.stream("thinking", u.Content.Text)
	case *acp.AgentMessageChunk:
		p.stream("agent", u.Content.Text)
	case *acp.ToolCall:
		loc := ""
		for _, l := range u.Locations {
			loc = " → " + l.Path
			if l.Line != nil {
				loc += fmt.Sprintf(":%d", *l.Line)
			}
		}
		p.line("  ┌ tool %s: %s [%s, %s]%s", u.ToolCallID, u.Title, u.Kind, u.Status, loc)
		p.content(u.Content)
		if ti, ok := u.Meta["terminal_info"].(map[string]any); ok {
			p.line("  │ (a terminal in %v)", ti["cwd"])
		}
	case *acp.ToolCallUpdate:
		if out, ok := u.Meta["terminal_output"].(map[string]any); ok {
			p.line("  │ %s", strings.TrimRight(fmt.Sprint(out["data"]), "\n"))
		}
		if u.Status != nil {
			title := ""
			if u.Title != nil {
				title = ": " + *u.Title
			}
			mark := "│"
			if *u.Status == acp.StatusCompleted || *u.Status == acp.StatusFailed {
				mark = "└"
			}
			p.line("  %s tool %s %s%s", mark, u.ToolCallID, *u.Status, title)
		}
		p.content(u.Content)
	case *acp.Plan:
		p.line("  plan:")
		for _, e := range u.Entries {
			p.line("    [%s] %s", e.Status, e.Content)
		}
	case *acp.AvailableCommandsUpdate:
		names := make([]string, 0, len(u.AvailableCommands))
		for _, c := range u.AvailableCommands {
			names = append(names, "/"+c.Name)
		}
		p.line("  (commands: %s)", strings.Join(names, " "))
	case *acp.UsageUpdate:
		p.line("  (context: %d of %d tokens)", u.Used, u.Size)
	case *acp.SessionInfoUpdate:
		if u.Title != nil {
			p.line("  (title: %q)", *u.Title)
		}
	case *acp.CurrentModeUpdate:
		p.line("  (mode: %s)", u.CurrentModeID)
	default:
		p.line("  (%s)", u.UpdateKind())
	}
}

func (p *demoPrinter) content(items []acp.ToolCallContent) {
	for _, it := range items {
		switch it.Type {
		case "content":
			if it.Content != nil {
				p.indent(it.Content.Text)
			}
		case "diff":
			p.line("    diff %s", it.Path)
			old := ""
			if it.OldText != nil {
				old = *it.OldText
			}
			p.indent(unifiedLines(old, it.NewText))
		case "terminal":
			p.line("    (terminal %s)", it.TerminalID)
		}
	}
}

// unifiedLines renders old → new as changed lines with "-" and "+" and a
// line of context either side, the way a diff view shows them.
func unifiedLines(old, new string) string {
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(old, new)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	type line struct {
		mark byte
		text string
	}
	var all []line
	for _, d := range diffs {
		mark := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			mark = '-'
		case diffmatchpatch.DiffInsert:
			mark = '+'
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				all = append(all, line{mark, strings.TrimSuffix(l, "\n")})
			}
		}
	}
	var out []string
	skipped := false
	for i, l := range all {
		near := l.mark != ' '
		for j := max(0, i-1); j <= min(len(all)-1, i+1) && !near; j++ {
			near = all[j].mark != ' '
		}
		if !near {
			if !skipped {
				out = append(out, "  …")
			}
			skipped = true
			continue
		}
		skipped = false
		out = append(out, string(l.mark)+" "+l.text)
	}
	return strings.Join(out, "\n")
}

func (p *demoPrinter) indent(text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	const max = 14
	if len(lines) > max {
		lines = append(lines[:max], fmt.Sprintf("… (%d more lines)", len(lines)-max))
	}
	for _, l := range lines {
		p.line("  │   %s", l)
	}
}

// stream prints a chunk, starting a labelled line when the kind changes.
func (p *demoPrinter) stream(kind, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != kind {
		if p.mode != "" {
			fmt.Fprintln(p.w)
		}
		fmt.Fprintf(p.w, "  %s: ", kind)
		p.mode = kind
	}
	fmt.Fprint(p.w, text)
}

func (p *demoPrinter) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != "" {
		fmt.Fprintln(p.w)
		p.mode = ""
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}
