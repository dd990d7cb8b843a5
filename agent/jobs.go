package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/session"
)

// jobEvents turns what a session's background jobs do into its events: a
// job's card opens, streams and closes like a call's, across turns (the
// mapping draws it with the presenters of the tool that started it). The
// job table (internal/jobs) owns the jobs; conversation.close ends them.
type jobEvents struct {
	emit func(context.Context, session.Event)
}

func (j jobEvents) Started(i jobs.Info) {
	j.emit(context.Background(), session.New(session.JobStart{CardID: i.CardID, Job: i.ID, Tool: i.Tool, Args: i.Args}))
}

func (j jobEvents) Output(i jobs.Info, p []byte) {
	j.emit(context.Background(), session.New(session.JobOutput{CardID: i.CardID, Data: string(p)}))
}

func (j jobEvents) Ended(i jobs.Info) {
	j.emit(context.Background(), session.New(session.JobEnd{CardID: i.CardID, Job: i.ID, Status: i.Status, Meta: i.Meta}))
}

// cmdJobs lists the session's background jobs for the user.
func cmdJobs(ctx context.Context, s *commandEnv, _ string) acp.StopReason {
	list := s.jobs.List()
	if len(list) == 0 {
		s.notice(ctx, "No background jobs in this session. The model starts one with bash's run_in_background; each ends when the session closes.")
		return acp.StopEndTurn
	}
	var b strings.Builder
	running := 0
	for _, j := range list {
		state := "running for " + time.Since(j.Started).Round(time.Second).String()
		if j.Running {
			running++
		} else {
			state = "ended: " + j.Status
		}
		fmt.Fprintf(&b, "\n- `%s` %s: `%s` (%d bytes of output)", j.ID, state, oneLine(j.Command), j.Bytes)
	}
	s.notice(ctx, fmt.Sprintf("%d background jobs, %d running (they end when the session closes):%s", len(list), running, b.String()))
	return acp.StopEndTurn
}

// oneLine shortens a command for a list entry.
func oneLine(s string) string {
	first, _, more := strings.Cut(s, "\n")
	s = session.Shorten(first, 80)
	if more && !strings.HasSuffix(s, "…") {
		s += "…"
	}
	return s
}
