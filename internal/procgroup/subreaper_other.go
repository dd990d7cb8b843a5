//go:build unix && !linux

package procgroup

import (
	"log/slog"
	"os/exec"
)

// Only Linux has child subreapers; elsewhere an orphaned command process
// goes to init (launchd), and the marker alone finds it.
func enableSubreaper(*slog.Logger) {}
func leaderGone(int)               {}
func noteAdopted([]procInfo)       {}

// startLeader starts a group's first process; with no subreaper there is
// nothing to keep it from.
func startLeader(cmd *exec.Cmd) error { return cmd.Start() }
