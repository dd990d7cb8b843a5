package procgroup

import (
	"io"
	"log/slog"
)

// EnableReaper does nothing on Windows: each group's Job Object already
// dies with the bridge (see the package comment).
func EnableReaper([]string, *slog.Logger) {}

// StopReaper does nothing on Windows.
func StopReaper() {}

// RunReaper is never started on Windows; run by hand, it waits for its
// input to end.
func RunReaper(in io.Reader) int {
	_, _ = io.Copy(io.Discard, in)
	return 0
}
