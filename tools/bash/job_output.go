package bash

import (
	"context"
	"strings"

	"github.com/acp-bridge/acp-bridge/internal/ansi"
	"github.com/acp-bridge/acp-bridge/registry"
)

// JobArgs name a background job.
type JobArgs struct {
	Job string `json:"job" jsonschema:"The job's id, as bash returned it (job-1)"`
}

// JobState is a background job as job_output and job_stop report it.
type JobState struct {
	Job     string `json:"job"`
	Output  string `json:"output,omitempty"` // new since the last job_output
	Running bool   `json:"running"`
	Status  string `json:"status,omitempty"` // how it ended
}

// renderJob is what the model reads of a job: its output without colour
// and cursor codes (internal/ansi), as for a command that ran in the call.
func renderJob(s JobState) string {
	var b strings.Builder
	if out := strings.TrimRight(ansi.Strip(s.Output), "\n"); out != "" {
		b.WriteString(out + "\n")
	} else {
		b.WriteString("(no new output)\n")
	}
	if s.Running {
		b.WriteString("[" + s.Job + " is running]")
	} else {
		b.WriteString("[" + s.Job + " ended: " + s.Status + "]")
	}
	return b.String()
}

// JobOutputTool reads what a background job printed since the last read.
func JobOutputTool() registry.Tool[JobArgs, JobState] {
	return registry.Tool[JobArgs, JobState]{
		Name:  "job_output",
		Facts: registry.Facts{ReadOnly: true, Kind: "read"},
		Description: "Read the output a background job (started by bash with run_in_background) printed since the last job_output of that job, " +
			"stdout and stderr interleaved, and whether it still runs or how it ended.",
		Run: func(_ context.Context, c *registry.Call, in JobArgs) (JobState, error) {
			if c.Jobs == nil {
				return JobState{}, registry.Errorf("NO_JOBS", "background jobs are not available here")
			}
			out, info, err := c.Jobs.Read(in.Job)
			if err != nil {
				return JobState{}, registry.Errorf("NO_SUCH_JOB", err.Error())
			}
			return JobState{Job: info.ID, Output: out, Running: info.Running, Status: info.Status}, nil
		},
		Render: func(_ JobArgs, s JobState) []registry.Content { return []registry.Content{registry.Text(renderJob(s))} },
	}
}
