package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/settings"
	"github.com/acp-bridge/acp-bridge/tools/bash"
	"github.com/acp-bridge/acp-bridge/tools/fs"
	"github.com/acp-bridge/acp-bridge/tools/question"
	"github.com/acp-bridge/acp-bridge/tools/todo"
	"github.com/acp-bridge/acp-bridge/tools/web"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func agentVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

// startConfig parses the flags of the program called name (extra adds a
// command's own, as serve does). When it should not go on (--version,
// --help, a bad setting) it has printed what it had to, and code is the
// exit status.
func startConfig(name string, args []string, stdout, stderr io.Writer, extra ...func(*flag.FlagSet)) (cfg *config, code int, ok bool) {
	cfg, _, err := parseFlags(name, args, stdout, extra...)
	switch {
	case errors.Is(err, errVersion):
		fmt.Fprintln(stdout, versionLine())
		return nil, 0, false
	case errors.Is(err, flag.ErrHelp):
		return nil, 0, false
	case err != nil:
		printStartError(stderr, name, err)
		return nil, 2, false
	}
	return cfg, 0, true
}

// run is the whole program; main only wires the process's streams to it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "demo" {
		return runDemo(ctx, args[1:], stdout, stderr)
	}
	if code, ok := runCommand(ctx, args, stdin, stdout, stderr); ok {
		return code
	}
	b, code, ok := prepare("acp-bridge", args, stdout, stderr)
	if !ok {
		return code
	}
	defer b.stop()
	if isTerminal(stdin) {
		fmt.Fprint(stderr, terminalNote)
	}
	serve(ctx, b.opts, stdin, stdout, b.log)
	return 0
}

// prepared is what every way of serving ACP (stdio, serve) sets up before
// its first connection: the settings, the log, the process watchdog, the
// journal and spill directory, and the agents' options.
type prepared struct {
	cfg   *config
	opts  agent.Options
	log   *slog.Logger
	stops []func() // undone in reverse by stop
}

func (b *prepared) stop() {
	for i := len(b.stops) - 1; i >= 0; i-- {
		b.stops[i]()
	}
}

// prepare sets a bridge up from the flags, environment and config file
// (name and extra as for startConfig). When !ok it has said why, and code
// is the exit status.
func prepare(name string, args []string, stdout, stderr io.Writer, extra ...func(*flag.FlagSet)) (b *prepared, code int, ok bool) {
	cfg, code, ok := startConfig(name, args, stdout, stderr, extra...)
	if !ok {
		return nil, code, false
	}
	logger, closeLog, err := newLogger(cfg, stderr)
	if err != nil {
		printStartError(stderr, name, err)
		return nil, 2, false
	}
	b = &prepared{cfg: cfg, log: logger, stops: []func(){closeLog}}
	b.stops = append(b.stops, enableReaper(logger))
	// Off the start-up path: reading a busy temp directory cost up to a
	// millisecond before the editor's initialize was answered.
	go removeDeadSpills(os.TempDir(), logger)
	// Off the start-up path too; our own journal is never swept (its pid runs).
	go sweepTempFiles(cfg.stateDir, logger)
	b.stops = append(b.stops, startJournal(cfg.stateDir, logger))
	// Full outputs of truncated commands are spilled here for the model to
	// read; they go when the process does, not into /tmp forever.
	if dir, err := os.MkdirTemp("", spillPrefix()); err == nil {
		cfg.spillDir = dir
		b.stops = append(b.stops, func() { os.RemoveAll(dir) })
	}
	b.opts, err = agentOptions(cfg, logger)
	if err == nil {
		b.opts.Sandbox, err = agentSandbox(cfg, cfg.spillDir)
	}
	if err != nil {
		if cfg.logFile != "" {
			logger.Error("bad configuration", "err", err.Error())
		}
		printStartError(stderr, name, err)
		b.stop()
		return nil, 2, false
	}
	if note := startNote(b.opts.Sandbox); note != "" {
		fmt.Fprint(stderr, note)
		logger.Warn(strings.TrimSpace(note))
	}
	return b, 0, true
}

// terminalNote is for someone who ran the program by hand: it is not
// interactive, but it keeps serving (a person may paste JSON-RPC lines).
const terminalNote = `acp-bridge is an Agent Client Protocol agent: an editor such as Zed starts it
and talks JSON-RPC over stdin and stdout, so there is no prompt here.
  Try it offline:   acp-bridge demo
  Use it in Zed:    add to settings.json
    "agent_servers": {"acp-bridge": {"type": "custom", "command": "acp-bridge"}}
  All settings:     acp-bridge --help
Waiting for JSON-RPC messages on stdin (Ctrl-D ends).
`

// drainTimeout bounds how long requests still running when stdin ends are
// waited for, so that a piped request is answered. Prompt turns are not
// waited for: they are cancelled, as when the editor goes away.
const drainTimeout = 5 * time.Second

// drainingReader holds back the end of stdin until the requests read
// before it have been answered (at most drainTimeout): a client that sends
// a request and closes its end still gets the answer.
type drainingReader struct {
	r    io.Reader
	idle func() bool // no request is in flight
}

func (d *drainingReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if errors.Is(err, io.EOF) && n == 0 && d.idle != nil {
		deadline := time.Now().Add(drainTimeout)
		for !d.idle() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return n, err
}

// serve runs one ACP connection until the editor closes it (or ctx ends),
// then stops every session.
func serve(ctx context.Context, opts agent.Options, stdin io.Reader, stdout io.Writer, logger *slog.Logger) {
	var ag *agent.Agent
	var closer io.Closer
	if c, ok := stdin.(io.Closer); ok {
		closer = c
	}
	var conn *acp.Conn
	ready := make(chan struct{})
	in := &drainingReader{r: stdin, idle: func() bool {
		<-ready
		// A prompt turn may run for minutes: the end of stdin cancels it
		// (the editor is gone). Everything else is answered first.
		return !slices.ContainsFunc(conn.InFlight(), func(m string) bool { return m != acp.MethodSessionPrompt })
	}}
	conn = acp.NewConn(ctx, func(c acp.Client) acp.Agent {
		ag = agent.New(c, opts)
		return ag
	}, in, stdout, closer, &acp.Options{Logger: logger})
	close(ready)
	// Another process (another chat of the same client) resuming a session
	// this one holds asks for it: an idle one is handed over.
	stopHandOver := watchHandOver(ag.HandOverRequested)
	defer stopHandOver()
	logger.Info("serving ACP on stdio", "version", opts.Version)
	select {
	case <-conn.Done():
		logger.Info("client disconnected")
	case <-ctx.Done():
		logger.Info("shutting down", "cause", context.Cause(ctx))
		conn.Close()
	}
	ag.Shutdown()
	conn.Wait()
	// The last line of every log: without it a log cut short by a crash
	// cannot be told from one whose sessions were all stopped.
	logger.Info("stopped")
}

func agentOptions(cfg *config, logger *slog.Logger) (agent.Options, error) {
	reg := registry.New()
	// Before any tool is registered: a definition takes the registry's
	// logger when it joins, for presenter panics and "schema failed, tool
	// not offered" (MCP tools join later, through session scopes).
	reg.Logger = logger
	fs.Register(reg)
	registry.MustAdd(reg, bash.Tool(&bash.Options{SpillDir: cfg.spillDir}))
	registry.MustAdd(reg, bash.JobOutputTool())
	registry.MustAdd(reg, bash.JobStopTool())
	todo.Register(reg)
	question.Register(reg)
	web.Register(reg, cfg.webOptions(logger))
	models, def, err := cfg.modelChoices()
	if err != nil {
		return agent.Options{}, err
	}
	opts := agent.Options{
		Version:          agentVersion(),
		Registry:         reg,
		MaxTurnRequests:  cfg.maxTurn,
		Logger:           logger,
		ModelHint:        "set --model or ACP_BRIDGE_MODEL",
		Models:           models,
		DefaultModel:     def,
		MoreModels:       cfg.moreModels(models, def, logger),
		PermissionMode:   cfg.permissionMode,
		OfferBypass:      cfg.offerBypass,
		ToolsMode:        codemode.Mode(cfg.toolsMode),
		CompactThreshold: cfg.compactAt,
		TerminalLogin:    loginMethod(),
		Logout:           logout,
		Policy:           cfg.policy,
	}
	if cfg.routes != nil {
		opts.Routes = cfg.routes
	}
	if dir := settingsDir(); dir != "" {
		opts.Settings = &settings.Store{Dir: dir}
	}
	if cfg.stateDir != "" {
		// A state directory that cannot be used must not stop the editor's
		// agent from starting: sessions then live in memory only.
		st, err := session.OpenStore(cfg.stateDir, &session.StoreOptions{Logger: logger})
		if err != nil {
			logger.Error("sessions will not be saved", "err", err)
		} else {
			opts.Store = st
		}
	}
	// At start (serve) and at each load: a bridge killed while this one ran
	// left its files after this one's start.
	opts.SweepTempFiles = func() { sweepTempFiles(cfg.stateDir, logger) }
	logger.Info("configuration", "config", cfg.configPath, "model", def, "models", len(models),
		"permissionMode", cfg.permissionMode, "toolsMode", cfg.toolsMode)
	return opts, nil
}

// settingsDir keeps the project memory (settings.Store): the user's config
// directory, never a repository. "" when there is no home to put it in.
func settingsDir() string {
	if p := defaultConfigPath(); p != "" {
		return filepath.Dir(p)
	}
	return ""
}

func newLogger(cfg *config, stderr io.Writer) (*slog.Logger, func(), error) {
	level := defaultLogLevel(cfg, stderr)
	if cfg.logLevel != "" {
		if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
			return nil, nil, fmt.Errorf("unknown log level %q (use debug, info, warn or error)", cfg.logLevel)
		}
	}
	w, closeFn := stderr, func() {}
	if cfg.logFile != "" {
		f, err := os.OpenFile(cfg.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot open the log file: %w", err)
		}
		w, closeFn = f, func() { f.Sync(); f.Close() }
	}
	l := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(l)
	return l, closeFn, nil
}

// defaultLogLevel is the level when none is set: info for a person
// watching a terminal or a log file, warn when stderr goes elsewhere. An
// editor keeps an agent's stderr (Zed shows it in its ACP logs and keeps
// it in memory), so only what may need attention goes there.
func defaultLogLevel(cfg *config, stderr io.Writer) slog.Level {
	if cfg.logFile != "" || isTerminal(stderr) {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// isTerminal reports whether stdin, stdout or stderr (as given) is a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// defaultStateDir follows the XDG base directory spec: session logs are
// state (worth keeping, not worth backing up like configuration).
func defaultStateDir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "acp-bridge", "sessions")
}
