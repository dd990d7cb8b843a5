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

// WatchJournal does nothing on Windows: there is no watchdog process; the
// next bridge to start removes what a killed one's journal lists.
func WatchJournal(string) {}

// RunReaper is never started on Windows; run by hand, it waits for its
// input to end.
func RunReaper(in io.Reader, _ func(journals []string)) int {
	_, _ = io.Copy(io.Discard, in)
	return 0
}
