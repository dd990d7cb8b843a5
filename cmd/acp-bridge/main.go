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
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return ctx
}
