package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/session"
)

// jobEvents turns what a session's background jobs do into its events: a
// job's card opens, streams and closes like a call's, across turns (the
// mapping draws it with the presenters of the tool that started it), and
// its live output is coalesced as a call's is (output.go), not an update
// per write. The job table (internal/jobs) owns the jobs;
// conversation.close ends them.
type jobEvents struct {
	emit func(context.Context, session.Event)

	mu  sync.Mutex                  // taken alone
	out map[string]*outputCoalescer // running jobs' live output, by card id
}

func newJobEvents(emit func(context.Context, session.Event)) *jobEvents {
	return &jobEvents{emit: emit, out: map[string]*outputCoalescer{}}
}

func (j *jobEvents) Started(i jobs.Info) {
	j.emit(context.Background(), session.New(session.JobStart{CardID: i.CardID, Job: i.ID, Tool: i.Tool, Args: i.Args}))
	o := newOutputCoalescer(func(data string) {
		j.emit(context.Background(), session.New(session.JobOutput{CardID: i.CardID, Data: data}))
	}, OutputInterval, mapping.MaxOutputChunk)
	j.mu.Lock()
	j.out[i.CardID] = o
	j.mu.Unlock()
}

func (j *jobEvents) Output(i jobs.Info, p []byte) {
	j.mu.Lock()
	o := j.out[i.CardID]
	j.mu.Unlock()
	if o != nil {
		o.Write(p)
	}
}

// Ended sends what output is pending, then closes the card: nothing of
// the job follows its end.
func (j *jobEvents) Ended(i jobs.Info) {
	j.mu.Lock()
	o := j.out[i.CardID]
	delete(j.out, i.CardID)
	j.mu.Unlock()
	if o != nil {
		o.Close()
	}
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
