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
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/conformance/suite"
)

const usage = `acp-conform: the ACP conformance suite.

Usage:
  acp-conform [flags] -- <agent command> [args...]

The agent is launched once per run (handshake, version, turn, bare-client)
and driven over stdio as Zed drives it. The text report goes to stdout; exit
status 0 means every mandatory check passed, 1 that one failed, 2 a usage or
setup error.

In scenario mode (-scenarios DIR) the txtar transcripts in DIR are replayed
instead; {scenario} in the agent command is replaced by a directory holding
the scenario's extra files (e.g. a model script).

Flags:
`

// run is the whole command; main wires the process streams to it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("acp-conform", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprint(stderr, usage)
		fl.PrintDefaults()
		fmt.Fprintln(stderr, "\nChecks:")
		for _, c := range suite.Checks {
			fmt.Fprintf(stderr, "  %-32s %-9s  %s\n", c.ID, c.Level, c.Description)
		}
	}
	var (
		fs          = fl.Bool("fs", true, "advertise fs.readTextFile and fs.writeTextFile")
		terminal    = fl.Bool("terminal", true, "advertise terminal/*")
		termOutput  = fl.Bool("terminal-output", true, "advertise _meta.terminal_output (Zed's display terminals)")
		elicitation = fl.Bool("elicitation", true, "advertise elicitation form and url")
		prompt      = fl.String("prompt", suite.DefaultPrompt, "the main turn's prompt; it should make the agent use tools")
		cancel      = fl.String("cancel-prompt", suite.DefaultCancelPrompt, "the prompt of the turn that is cancelled; it should take a while")
		cancelAfter = fl.Duration("cancel-after", 2*time.Second, "cancel this long after the prompt if the agent sent nothing before")
		notices     = fl.Bool("notices", false, "advertise session.notices (notice updates)")
		compaction  = fl.Bool("compaction", false, "advertise session.compaction (compaction updates)")
		termDelta   = fl.Bool("terminal-output-delta", false, "advertise _meta.terminal_output_delta (live output as appends, codex-acp's convention)")
		auth        = fl.String("auth", "", "call authenticate with this method id after initialize")
		workspace   = fl.String("workspace", "", "the session cwd (default: a scratch directory with README.md and main.go)")
		timeout     = fl.Duration("timeout", 30*time.Second, "the time one request may take")
		turnTimeout = fl.Duration("turn-timeout", 120*time.Second, "the time one prompt turn may take")
		jsonOut     = fl.String("json", "", "also write the JSON report to this file (- for stdout, replacing the text)")
		transcripts = fl.Bool("transcripts", false, "include every run's wire transcript in the JSON report")
		scenarios   = fl.String("scenarios", "", "replay the txtar scenarios in this directory instead of the checks")
		update      = fl.Bool("update", false, "with -scenarios: rewrite each scenario's expected agent output")
		schemaPath  = fl.String("schema", "", "the ACP schema.json; schema.unstable.json beside it is used too (default: $ACP_SCHEMA_DIR, else found by acpschema.Locate)")
		verbose     = fl.Bool("v", false, "log progress to stderr")
	)
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	argv := fl.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "acp-conform: no agent command; put it after --")
		fl.Usage()
		return 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	var schema *acpschema.Schema
	var err error
	if *schemaPath != "" {
		schema, err = acpschema.Load(*schemaPath)
	} else {
		schema, err = acpschema.Default()
	}
	if err != nil {
		fmt.Fprintf(stderr, "acp-conform: schema: %v\n", err)
		return 2
	}
	if *workspace != "" {
		if *workspace, err = filepath.Abs(*workspace); err != nil {
			fmt.Fprintf(stderr, "acp-conform: %v\n", err)
			return 2
		}
	}
	caps := suite.Caps{FS: *fs, Terminal: *terminal, TerminalOutput: *termOutput, Elicitation: *elicitation, Zed: true,
		Notices: *notices, Compaction: *compaction, TerminalOutputDelta: *termDelta}

	if *scenarios != "" {
		return runScenarios(ctx, *scenarios, *update, argv, schema, stdout, stderr)
	}

	rep, err := suite.Run(ctx, suite.Config{
		Launch: suite.Command(argv, nil), Agent: argv, Caps: caps,
		Prompt: *prompt, CancelPrompt: *cancel, CancelAfter: *cancelAfter,
		AuthMethod: *auth, Workspace: *workspace, Timeout: *timeout, TurnTimeout: *turnTimeout,
		Schema: schema, Transcripts: *transcripts, Logger: logger,
	})
	if err != nil {
		fmt.Fprintf(stderr, "acp-conform: %v\n", err)
		return 2
	}
	switch *jsonOut {
	case "":
		rep.WriteText(stdout)
	case "-":
		rep.WriteJSON(stdout)
	default:
		rep.WriteText(stdout)
		f, err := os.Create(*jsonOut)
		if err != nil {
			fmt.Fprintf(stderr, "acp-conform: %v\n", err)
			return 2
		}
		werr := rep.WriteJSON(f)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			fmt.Fprintf(stderr, "acp-conform: %v\n", werr)
			return 2
		}
	}
	if !rep.Conformant {
		return 1
	}
	return 0
}
