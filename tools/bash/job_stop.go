package bash

import (
	"context"

	"github.com/acp-bridge/acp-bridge/registry"
)

// JobStopTool stops a background job: SIGTERM to it and everything it
// started, SIGKILL a second later for what is left.
func JobStopTool() registry.Tool[JobArgs, JobState] {
	return registry.Tool[JobArgs, JobState]{
		Name:  "job_stop",
		Facts: registry.Facts{Kind: "execute"},
		Description: "Stop a background job (started by bash with run_in_background) and everything it started: " +
			"SIGTERM, then SIGKILL after a second. Returns its last unread output and how it ended. A job that ended already is no error.",
		Run: func(_ context.Context, c *registry.Call, in JobArgs) (JobState, error) {
			if c.Jobs == nil {
				return JobState{}, registry.Errorf("NO_JOBS", "background jobs are not available here")
			}
			if _, err := c.Jobs.Stop(in.Job); err != nil {
				return JobState{}, registry.Errorf("NO_SUCH_JOB", err.Error())
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
