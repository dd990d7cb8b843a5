//go:build unix

package bash

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// runTool runs one tool definition on a call that has the job table tb.
// A failure comes back as a result with its code and message.
func runTool[In, Out any](t *testing.T, tool registry.Tool[In, Out], cwd string, tb *jobs.Table, args any) registry.Result {
	t.Helper()
	d, err := registry.Define(tool)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	if err := d.Validate(raw); err != nil {
		t.Fatalf("validate %s: %v", raw, err)
	}
	r, err := d.Run(context.Background(), &registry.Call{ID: "c1", Name: tool.Name, Args: raw, Cwd: cwd, Roots: []string{cwd}, Jobs: tb})
	if err != nil {
		var te *registry.Error
		if !asToolError(err, &te) {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		return registry.ErrorResult(te.Code, te.Message)
	}
	return r
}

// TestBackgroundJob: run_in_background returns at once with the job's id;
// job_output reads what is new; job_stop ends the job and the daemon it
// left; closing the table ends what still runs.
func TestBackgroundJob(t *testing.T) {
	dir := t.TempDir()
	tb := jobs.New(nil)
	start := time.Now()
	r := runTool(t, Tool(nil), dir, tb, Args{Command: daemon + "echo ready; while :; do sleep 0.05; done", RunInBackground: true})
	if r.IsError || !strings.Contains(r.Text(), "job-1") {
		t.Fatalf("start: %s", r.Text())
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the call waited %v for a background command", el)
	}
	pid := 0
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out, _, _ := tb.Read("job-1")
		if strings.Contains(out, "ready") {
			pid = readPids(t, dir, "daemon.pid")[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no output from the job")
		}
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if r := runTool(t, JobOutputTool(), dir, tb, JobArgs{Job: "job-1"}); !strings.Contains(r.Text(), "(no new output)") || !strings.Contains(r.Text(), "job-1 is running") {
		t.Errorf("job_output after everything was read: %s", r.Text())
	}
	r = runTool(t, JobStopTool(), dir, tb, JobArgs{Job: "job-1"})
	if r.IsError || !strings.Contains(r.Text(), "job-1 ended") {
		t.Errorf("job_stop: %s", r.Text())
	}
	if !gone(pid) {
		t.Errorf("the job's daemon %d outlived job_stop", pid)
	}
	if r := runTool(t, JobOutputTool(), dir, tb, JobArgs{Job: "job-9"}); !r.IsError || r.Code != "NO_SUCH_JOB" {
		t.Errorf("an unknown job: %s %s", r.Code, r.Text())
	}
	// Close ends what still runs.
	runTool(t, Tool(nil), dir, tb, Args{Command: "sleep 300", RunInBackground: true})
	tb.Close()
	for _, j := range tb.List() {
		if j.Running {
			t.Errorf("%s still runs after Close", j.ID)
		}
	}
	if r := runTool(t, Tool(nil), dir, nil, Args{Command: "true", RunInBackground: true}); r.Code != "BASH_NO_BACKGROUND" {
		t.Errorf("without a job table: %s %s", r.Code, r.Text())
	}
}

// A command in the foreground and a background job are made by one
// shellCommand: on a platform that cannot confine, neither runs, and both
// fail with SANDBOX_UNAVAILABLE; under mode off both run as they are.
func TestUnconfinableCommandNeverRuns(t *testing.T) {
	defer func(p func() sandbox.Support) { sandbox.Probe = p }(sandbox.Probe)
	sandbox.Probe = func() sandbox.Support { return sandbox.Support{Reason: "simulated: no Landlock"} }
	dir := t.TempDir()
	d, err := registry.Define(Tool(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := sandbox.WithPolicy(t.Context(), &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{dir}, TempDir: t.TempDir()})
	tb := jobs.New(nil)
	defer tb.Close()
	for _, background := range []bool{false, true} {
		raw, _ := json.Marshal(Args{Command: "echo ran > ran", RunInBackground: background})
		_, err := d.Run(ctx, &registry.Call{ID: "c1", Name: "bash", Args: raw, Cwd: dir, Roots: []string{dir}, Jobs: tb})
		var te *registry.Error
		if !asToolError(err, &te) || te.Code != sandbox.CodeUnavailable || !strings.Contains(te.Message, "simulated: no Landlock") {
			t.Errorf("background %v: %v, want a %s failure naming the reason", background, err, sandbox.CodeUnavailable)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("a command ran unconfined")
	}
	if _, _, err := tb.Read("job-1"); err == nil {
		t.Error("a job was started")
	}

	// Under mode off (the user's choice) both run as they are.
	off := sandbox.WithPolicy(t.Context(), &sandbox.Policy{Mode: sandbox.Off})
	for _, background := range []bool{false, true} {
		name := map[bool]string{false: "fg", true: "bg"}[background]
		raw, _ := json.Marshal(Args{Command: "echo ran > " + name, RunInBackground: background})
		if _, err := d.Run(off, &registry.Call{ID: "c1", Name: "bash", Args: raw, Cwd: dir, Roots: []string{dir}, Jobs: tb}); err != nil {
			t.Fatalf("mode off, background %v: %v", background, err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); tb.List()[0].Running; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job under mode off never ended")
		}
	}
	for _, name := range []string{"fg", "bg"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "ran\n" {
			t.Errorf("mode off, %s: %q, %v", name, b, err)
		}
	}
}
