package bash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/internal/procgroup"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// jobRefusalAdvice is what to do about a background job the sandbox
// refused. Nobody can be asked when it ends (the call that started it was
// answered long before), so the run outside the sandbox is offered to the
// command run in the foreground (agent/sandbox.go); an "always" answer
// there lets the same command run outside in the background too.
const jobRefusalAdvice = "A background job cannot be offered a run outside the sandbox: run the command again without run_in_background to be offered one; after an \"always\" answer it runs outside the sandbox in the background too."

// startJob runs a command in the background: its own group as any command
// (procgroup: it dies with the bridge however the bridge dies), its output
// kept by the session's job table, which stops it when asked or when the
// session closes. The call returns at once with the job's id.
func startJob(ctx context.Context, c *registry.Call, in Args, cwd string, o Options) (Outcome, error) {
	out := Outcome{Cwd: cwd}
	if c.Jobs == nil {
		return out, registry.Errorf("BASH_NO_BACKGROUND", "background commands are not available here; run the command without run_in_background")
	}
	cmd, pol, err := shellCommand(ctx, in.Command, cwd, o.env)
	if err != nil {
		return out, err
	}
	// One pipe for both streams: the job's output is read as the terminal
	// shows it, interleaved.
	r, w, err := os.Pipe()
	if err != nil {
		return out, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	group, err := procgroup.Start(cmd)
	w.Close()
	if err != nil {
		r.Close()
		return out, registry.Errorf("BASH_SPAWN", "could not start bash: "+err.Error())
	}
	exited := make(chan struct{})
	var stopped sync.Once
	stopReq := make(chan struct{})
	job, err := c.Jobs.Add(jobs.Spec{CardID: c.ID + "-job", Tool: c.Name, Args: c.Args, Command: in.Command}, func() {
		stopped.Do(func() { close(stopReq) })
	})
	if err != nil {
		_ = group.Kill()
		_ = cmd.Wait()
		group.Release()
		r.Close()
		return out, registry.Errorf("BASH_NO_BACKGROUND", err.Error())
	}
	started := time.Now()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				job.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	go func() {
		defer group.Release()
		select {
		case <-exited:
			killStragglers(group, o.KillGrace)
		case <-stopReq:
			terminate(group, exited, o.CancelGrace)
		}
		// A process that left the group may still hold the pipe: its
		// output is not waited for past a second (closing r ends the read).
		select {
		case <-readDone:
		case <-time.After(time.Second):
		}
		r.Close()
		<-readDone
		code, sig := exitStatus(cmd.ProcessState)
		status := "killed by " + sig
		if sig == "" && code != nil {
			status = fmt.Sprintf("exit code %d", *code)
			if line, ok := sandbox.Refusal(pol, cwd, *code, job.Tail(o.TailBytes)); ok {
				status += " " + refusalNote(pol, line) + " " + jobRefusalAdvice
			}
		}
		m, _ := json.Marshal(meta{Cwd: cwd, ExitCode: code, Signal: sig, DurationMs: time.Since(started).Milliseconds(),
			Output: job.Tail(o.TailBytes)})
		job.End(status, m)
	}()
	out.Job = job.ID()
	return out, nil
}
