// Command acp-bridge is an Agent Client Protocol agent: an editor such as Zed
// launches it and speaks JSON-RPC over its stdin and stdout.
//
// Only this package touches os.Stdout: it is the protocol channel, and one
// stray byte breaks the editor. Logs go to stderr or --log-file.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(signalContext(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func signalContext() context.Context {
	// An editor that closes our stdout must make the next write fail with
	// EPIPE, so the connection ends and the sessions stop what they started.
	// By default Go dies of SIGPIPE on the spot instead, leaving every
	// running command's process group orphaned. Notify rather than Ignore:
	// an ignored SIGPIPE is inherited through exec by every command bash
	// runs, and `yes | head` would then never end.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return ctx
}
