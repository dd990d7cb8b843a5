package hooks

import (
	"context"
	"os/exec"
	"testing"

	"github.com/acp-bridge/acp-bridge/tools/bash"
)

// BenchmarkRunNoop is what a hook that does nothing costs a tool call: a
// bash in its own process group, the input on stdin, the answer read.
func BenchmarkRunNoop(b *testing.B) {
	if _, err := bash.Find(); err != nil {
		b.Skip(err)
	}
	h, _ := New(PreToolUse, "", "exit 0", 0, "bench")
	in := Input{SessionID: "s", Cwd: b.TempDir(), ToolName: "bash"}
	for b.Loop() {
		if o := Run(context.Background(), &h, in, nil); o.Failure != "" {
			b.Fatal(o.Failure)
		}
	}
}

// BenchmarkPlainBash is the floor a hook's cost is read against: the same
// `bash -c 'exit 0'` through os/exec, with no process group, no input and
// no containment.
func BenchmarkPlainBash(b *testing.B) {
	p, err := bash.Find()
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if err := exec.Command(p, "-c", "exit 0").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
