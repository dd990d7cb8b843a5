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
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/fs"
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

type config struct {
	model    string
	logLevel string
	logFile  string
	maxTurn  int
	stateDir string
}

const usage = `acp-bridge: an Agent Client Protocol agent for Zed and other ACP editors.

Usage:
  acp-bridge [flags]          serve ACP over stdin/stdout (what an editor launches)
  acp-bridge demo [flags]     run an offline demo session and print what an editor would show
  acp-bridge --version        print the version

Flags:
`

func parseFlags(name string, args []string, stderr io.Writer) (*config, *flag.FlagSet, error) {
	cfg := &config{}
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.StringVar(&cfg.model, "model", os.Getenv("ACP_BRIDGE_MODEL"),
		"the model: script:FILE replays a scripted model (env ACP_BRIDGE_MODEL)")
	fl.StringVar(&cfg.logLevel, "log-level", envOr("ACP_BRIDGE_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env ACP_BRIDGE_LOG_LEVEL)")
	fl.StringVar(&cfg.logFile, "log-file", os.Getenv("ACP_BRIDGE_LOG_FILE"), "append logs to this file instead of stderr (env ACP_BRIDGE_LOG_FILE)")
	fl.IntVar(&cfg.maxTurn, "max-turn-requests", 50, "model requests allowed in one prompt turn")
	fl.StringVar(&cfg.stateDir, "state-dir", envOr("ACP_BRIDGE_STATE_DIR", defaultStateDir()),
		"where session logs are kept, for session/load, resume and list; empty keeps sessions in memory only (env ACP_BRIDGE_STATE_DIR)")
	showVersion := fl.Bool("version", false, "print the version and exit")
	fl.Usage = func() {
		fmt.Fprint(stderr, usage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return nil, nil, err
	}
	if *showVersion {
		return nil, fl, errVersion
	}
	return cfg, fl, nil
}

var errVersion = errors.New("version")

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// run is the whole program; main only wires the process's streams to it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "demo" {
		return runDemo(ctx, args[1:], stdout, stderr)
	}
	cfg, _, err := parseFlags("acp-bridge", args, stderr)
	switch {
	case errors.Is(err, errVersion):
		fmt.Fprintf(stdout, "acp-bridge %s\n", agentVersion())
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return 2
	}
	logger, closeLog, err := newLogger(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "acp-bridge: %v\n", err)
		return 2
	}
	defer closeLog()
	opts, err := agentOptions(cfg, logger)
	if err != nil {
		logger.Error("bad configuration", "err", err)
		fmt.Fprintf(stderr, "acp-bridge: %v\n", err)
		return 2
	}
	serve(ctx, opts, stdin, stdout, logger)
	return 0
}

// serve runs one ACP connection until the editor closes it (or ctx ends),
// then stops every session.
func serve(ctx context.Context, opts agent.Options, stdin io.Reader, stdout io.Writer, logger *slog.Logger) {
	var ag *agent.Agent
	var closer io.Closer
	if c, ok := stdin.(io.Closer); ok {
		closer = c
	}
	conn := acp.NewConn(ctx, func(c acp.Client) acp.Agent {
		ag = agent.New(c, opts)
		return ag
	}, stdin, stdout, closer, &acp.Options{Logger: logger})
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
}

func agentOptions(cfg *config, logger *slog.Logger) (agent.Options, error) {
	reg := registry.New()
	fs.Register(reg)
	opts := agent.Options{
		Version:         agentVersion(),
		Registry:        reg,
		MaxTurnRequests: cfg.maxTurn,
		Logger:          logger,
		ModelHint:       "set ACP_BRIDGE_MODEL",
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
	switch {
	case cfg.model == "":
	case strings.HasPrefix(cfg.model, "script:"):
		s, err := model.LoadScript(strings.TrimPrefix(cfg.model, "script:"))
		if err != nil {
			return opts, err
		}
		opts.Model = s
	default:
		return opts, fmt.Errorf("unknown model %q (use script:FILE)", cfg.model)
	}
	return opts, nil
}

func newLogger(cfg *config, stderr io.Writer) (*slog.Logger, func(), error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return nil, nil, fmt.Errorf("bad --log-level %q: %w", cfg.logLevel, err)
	}
	w, closeFn := stderr, func() {}
	if cfg.logFile != "" {
		f, err := os.OpenFile(cfg.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("open --log-file: %w", err)
		}
		w, closeFn = f, func() { f.Sync(); f.Close() }
	}
	l := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(l)
	return l, closeFn, nil
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
