package bash

import "testing"

// TestRenderJob: what the model reads of a job is its new output without
// colour or cursor codes, and its state.
func TestRenderJob(t *testing.T) {
	tests := []struct {
		name string
		in   JobState
		want string
	}{
		{"colour stripped", JobState{Job: "job-1", Output: "\x1b[32mready\x1b[0m on :3000\n\x1b[2K\rbuilt\n\n", Running: true},
			"ready on :3000\n\rbuilt\n[job-1 is running]"},
		{"nothing new", JobState{Job: "job-1", Running: true}, "(no new output)\n[job-1 is running]"},
		{"only codes is nothing new", JobState{Job: "job-2", Output: "\x1b[0m\n", Status: "exit code 0"}, "(no new output)\n[job-2 ended: exit code 0]"},
		{"ended", JobState{Job: "job-3", Output: "bye", Status: "killed by SIGTERM"}, "bye\n[job-3 ended: killed by SIGTERM]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renderJob(tt.in); got != tt.want {
				t.Errorf("renderJob = %q, want %q", got, tt.want)
			}
		})
	}
}
