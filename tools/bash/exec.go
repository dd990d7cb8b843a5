package bash

import (
	"context"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Script is a command line the bridge runs on its own behalf (a user's
// hook), not for the model.
type Script struct {
	Command string
	Dir     string
	Stdin   []byte   // nil: /dev/null
	Env     []string // NAME=value, added to the scrubbed environment
	Timeout time.Duration
}

// Exec runs a script exactly as the tool runs a command: `bash -c` in a
// process group of its own that dies with the bridge, the credential-free
// environment, and the whole group stopped (SIGTERM, then SIGKILL) at the
// timeout or when ctx ends. Outcome.TimedOut says the timeout stopped it;
// a cancelled ctx is an ABORTED error.
func Exec(ctx context.Context, s Script) (Outcome, error) {
	o := (&Options{DefaultTimeout: s.Timeout, MaxTimeout: s.Timeout, KillGrace: time.Second}).withDefaults()
	o.stdin, o.env = s.Stdin, s.Env
	return run(ctx, &registry.Call{Cwd: s.Dir}, Args{Command: s.Command}, o)
}
