//go:build unix && !linux

package procgroup

import "log/slog"

// Only Linux has child subreapers; elsewhere an orphaned command process
// goes to init (launchd), and the marker alone finds it.
func enableSubreaper(*slog.Logger) {}
func leaderStarted(int)            {}
func leaderGone(int)               {}
func noteAdopted([]procInfo)       {}
