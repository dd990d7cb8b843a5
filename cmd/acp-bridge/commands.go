package main

import (
	"context"
	"io"

	"github.com/acp-bridge/acp-bridge/sandbox"
)

// runCommand runs the commands other than serving ACP on stdio (login,
// logout, doctor, serve, the hidden watchdog); ok is false when args name none of them.
func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case sandbox.HelperArg:
		// Hidden: confine this process and exec the command (sandbox.go).
		return sandbox.HelperMain(args[1:]), true
	case reaperArg:
		return runReaper(stdin), true
	case "login":
		return runLogin(ctx, args[1:], stdin, stdout, stderr), true
	case "logout":
		return runLogout(stdout, stderr), true
	case "doctor":
		return runDoctor(ctx, args[1:], stdout, stderr), true
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr), true
	}
	return 0, false
}
