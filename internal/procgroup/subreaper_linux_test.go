package procgroup

import (
	"log/slog"
	"os/exec"
	"sync"
	"testing"
)

// A group's first process is waited for by its exec.Cmd, never by the
// subreaper's collection of orphans: a SIGCHLD that comes between the fork
// and the group's registration must not make the leader look like an
// adopted orphan and steal its exit status (a hook that then "ended
// without an exit status"). Many short-lived groups start at once, so each
// one's exit is a SIGCHLD while others are being started.
func TestLeadersKeepTheirExitStatus(t *testing.T) {
	enableSubreaper(slog.New(slog.DiscardHandler))
	const workers, each = 4, 60
	var wg sync.WaitGroup
	errs := make(chan string, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				cmd := exec.Command("true")
				g, err := Start(cmd)
				if err != nil {
					errs <- "start: " + err.Error()
					return
				}
				err = cmd.Wait()
				g.Release()
				switch {
				case err != nil:
					errs <- "wait: " + err.Error()
				case cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0:
					errs <- "no exit status: " + cmd.ProcessState.String()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n++; n <= 3 {
			t.Error(e)
		}
	}
	if n > 3 {
		t.Errorf("... %d leaders in all lost their exit status", n)
	}
}
