// Command acp-conform runs the ACP conformance suite against any agent:
//
//	go run ./conformance/cmd/acp-conform [flags] -- <agent command> [args]
//
// It launches the agent over stdio several times, drives it as Zed would
// (switches turn fs, terminal and _meta.terminal_output off), validates every
// message in both directions against the official schema, prints a report
// and exits 0 only when every mandatory check passes. With -scenarios it
// also replays txtar transcripts, and -update rewrites their goldens.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
