package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/acp-bridge/acp-bridge/internal/atomicfile"
	"github.com/acp-bridge/acp-bridge/internal/procgroup"
)

// reaperArg runs acp-bridge as the watchdog of another acp-bridge: hidden,
// not for people (see procgroup.RunReaper).
const reaperArg = "__reaper"

// The watchdog also removes the temporary files a killed bridge's journal
// lists (a kill in the middle of a write), as the next bridge's start would.
func runReaper(stdin io.Reader) int { return procgroup.RunReaper(stdin, cleanJournals) }

func cleanJournals(journals []string) {
	for _, j := range journals {
		_, _ = atomicfile.Clean(j) // nobody to tell: the next start sweeps what is left
	}
}

// enableReaper makes every command and MCP server of this process die with
// it, also when the editor kills it with SIGKILL. stop ends the watchdog at
// a clean exit, after the sessions stopped what they started.
func enableReaper(logger *slog.Logger) (stop func()) {
	exe, err := os.Executable()
	if runtime.GOOS == "linux" && (err != nil || strings.HasSuffix(exe, " (deleted)")) {
		// An upgrade replaced the file: /proc/self/exe is still the
		// running binary.
		exe, err = "/proc/self/exe", nil
	}
	if err != nil {
		logger.Error("process watchdog not started: commands may outlive a killed bridge", "err", err)
		return func() {}
	}
	procgroup.EnableReaper([]string{exe, reaperArg}, logger)
	return procgroup.StopReaper
}

// spillPrefix names this process's spill directory: the pid tells a later
// bridge whose it is.
func spillPrefix() string { return "acp-bridge-output-" + strconv.Itoa(os.Getpid()) + "-" }

// removeDeadSpills removes the spill directories of bridges that are gone
// (killed before they could remove their own): up to 64 MiB per stream each.
// A directory whose pid runs, or that does not name one, is left alone.
func removeDeadSpills(tmp string, logger *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, "acp-bridge-output-*-*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), "acp-bridge-output-")
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || procgroup.Exists(pid) {
			continue
		}
		if st, err := os.Lstat(d); err != nil || !st.IsDir() {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			logger.Warn("could not remove a dead bridge's spilled output", "dir", d, "err", err)
			continue
		}
		logger.Info("removed a dead bridge's spilled output", "dir", d)
	}
}
