//go:build linux

package procgroup

import (
	"os/exec"
	"testing"
)

// BenchmarkAliveAfterExit: what the end of every bash call pays to learn
// that nothing of its group is left (tools/bash killStragglers): one scan of
// the process table, whose cost grows with the processes on the machine.
func BenchmarkAliveAfterExit(b *testing.B) {
	cmd := exec.Command("true")
	g, err := Start(cmd)
	if err != nil {
		b.Fatal(err)
	}
	cmd.Wait()
	defer g.Release()
	b.ResetTimer()
	for range b.N {
		if g.Alive() {
			b.Fatal("a finished command's group is alive")
		}
	}
}

// BenchmarkCollectAdopted: what every SIGCHLD costs the subreaper (the
// exit of any child: every bash call, every MCP server): a look at every
// process for adopted orphans of ours.
func BenchmarkCollectAdopted(b *testing.B) {
	for b.Loop() {
		collectAdopted()
	}
}
