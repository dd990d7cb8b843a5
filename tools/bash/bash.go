// Package bash is the reference shell tool: one `bash -c` per call in its own
// process group, output streamed live to the card and bounded for the model,
// timeouts and cancellation that take the whole group down.
package bash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/google/jsonschema-go/jsonschema"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/ansi"
	"github.com/acp-bridge/acp-bridge/internal/procgroup"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// shutdownGrace replaces KillGrace when the agent stops because the editor
// disconnected: the bridge should be gone within a second.
const shutdownGrace = 200 * time.Millisecond

// Options tune the tool; the zero value of each field takes its default.
type Options struct {
	DefaultTimeout time.Duration // 120 s
	MaxTimeout     time.Duration // 600 s; a longer timeout_ms is clamped to it
	KillGrace      time.Duration // 3 s between SIGTERM and SIGKILL after a timeout or a finished command's leftovers
	CancelGrace    time.Duration // 1 s between SIGTERM and SIGKILL when the call is cancelled (shutdownGrace when the editor is gone)
	TailBytes      int           // 64,000 bytes per stream for the model
	SpillDir       string        // os.TempDir()
	MaxSpillBytes  int64         // 64 MiB per stream in the spill file
	ChunkBytes     int           // 256 KiB read size

	// For Exec: what the command reads on stdin (nil: /dev/null) and the
	// variables added to its environment.
	stdin []byte
	env   []string
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.DefaultTimeout <= 0 {
		v.DefaultTimeout = 120 * time.Second
	}
	if v.MaxTimeout <= 0 {
		v.MaxTimeout = 600 * time.Second
	}
	if v.KillGrace <= 0 {
		v.KillGrace = 3 * time.Second
	}
	if v.CancelGrace <= 0 {
		// A cancel is the user stopping the work: what ignores SIGTERM is
		// gone within 2 s of it.
		v.CancelGrace = time.Second
	}
	if v.TailBytes <= 0 {
		v.TailBytes = 64_000
	}
	if v.MaxSpillBytes <= 0 {
		v.MaxSpillBytes = 64 << 20
	}
	if v.ChunkBytes <= 0 {
		v.ChunkBytes = 256 << 10
	}
	return v
}

// DiskChanges is implemented by a Call.Files that needs to know when the
// agent may change files behind the editor's back: a command can write any
// file, so while one runs, disk changes are the agent's own.
type DiskChanges interface {
	BeginDiskChanges() (end func())
}

// Register adds bash with default options to r.
func Register(r *registry.Registry) { registry.MustAdd(r, Tool(nil)) }

// Args are the model's parameters.
type Args struct {
	Command     string `json:"command" jsonschema:"The command line, run with bash -c"`
	Description string `json:"description,omitempty" jsonschema:"What the command does, in 5-10 words, for the user"`
	TimeoutMs   int    `json:"timeout_ms,omitempty" jsonschema:"Milliseconds before the command is killed (default 120000, at most 600000)"`
	Workdir     string `json:"workdir,omitempty" jsonschema:"Directory to run in, absolute or relative to the workspace root (default: the workspace root)"`
	// RunInBackground starts the command as a background job (jobs.go).
	RunInBackground bool `json:"run_in_background,omitempty" jsonschema:"Start the command as a background job and return at once with its id (for servers, watchers, databases); read its output with job_output, stop it with job_stop. No timeout; it ends when the session closes"`
}

// Outcome is a finished command. Stdout and Stderr are what the model
// reads; Output is the interleaved tail the terminal card shows.
type Outcome struct {
	Cwd             string       `json:"cwd"`
	ExitCode        *int         `json:"exit_code"`
	Signal          string       `json:"signal,omitempty"`
	TimedOut        bool         `json:"timed_out,omitempty"`
	TimeoutMs       int64        `json:"timeout_ms"`
	DurationMs      int64        `json:"duration_ms"`
	Stdout          StreamResult `json:"stdout"`
	Stderr          StreamResult `json:"stderr"`
	Output          string       `json:"output"`
	OutputTruncated bool         `json:"output_truncated,omitempty"`
	// Limit is where the timeout that stopped the command was set (the
	// call's timeout_ms, the tool's default), when it did.
	Limit string `json:"limit,omitempty"`
	// Job is the id of the background job the call started (the command
	// runs on; nothing else is set).
	Job string `json:"job,omitempty"`
	// SandboxRefused is the line of output that says the sandbox refused
	// the command something (sandbox.Refusal), when it failed for that.
	SandboxRefused string `json:"sandbox_refused,omitempty"`
}

// Truncated reports whether the model saw only a tail of some stream.
func (o Outcome) Truncated() bool { return o.Stdout.Truncated || o.Stderr.Truncated }

// meta is what the result stores for the card: everything but the model's
// text, which is already the result's content.
type meta struct {
	Cwd             string `json:"cwd"`
	ExitCode        *int   `json:"exit_code"`
	Signal          string `json:"signal,omitempty"`
	TimedOut        bool   `json:"timed_out,omitempty"`
	TimeoutMs       int64  `json:"timeout_ms"`
	DurationMs      int64  `json:"duration_ms"`
	Output          string `json:"output"`
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	Truncated       bool   `json:"truncated,omitempty"`
	StdoutSpill     string `json:"stdout_spill,omitempty"`
	StderrSpill     string `json:"stderr_spill,omitempty"`
	Limit           string `json:"limit,omitempty"`
	// SandboxRefused: the agent reads it to offer a run outside the
	// sandbox (agent/sandbox.go).
	SandboxRefused string `json:"sandbox_refused,omitempty"`
}

const description = "Run a shell command with `bash -c` in the workspace (or workdir) and return its output. " +
	"Each call is a fresh shell; stdin is empty. The command is killed after timeout_ms " +
	"(default 120000, at most 600000) with its whole process group, and background processes " +
	"do not outlive the call. The result ends with [exit code: N], [killed by signal: SIG] " +
	"or [timed out, stopped after N: where the limit is set]: check it and investigate failures before moving on. " +
	"Long output keeps its last 64 KB per stream; the full output's file is named when cut. " +
	"For a command that must keep running (a dev server, a watcher, a database), set run_in_background: " +
	"the call returns a job id at once, and job_output and job_stop reach the job."

// Tool returns the bash tool definition.
func Tool(o *Options) registry.Tool[Args, Outcome] {
	opts := o.withDefaults()
	return registry.Tool[Args, Outcome]{
		Name:        "bash",
		Facts:       registry.Facts{Kind: "execute"},
		Description: description,
		Schema: func(s *jsonschema.Schema) {
			s.Properties["command"].MinLength = jsonschema.Ptr(1)
			s.Properties["timeout_ms"].Minimum = jsonschema.Ptr(1.0)
		},
		Run: func(ctx context.Context, c *registry.Call, in Args) (Outcome, error) {
			out, err := run(ctx, c, in, opts)
			if out.TimedOut {
				out.Limit = limitSource(in, opts)
			}
			return out, err
		},
		Render: func(_ Args, out Outcome) []registry.Content {
			return []registry.Content{registry.Text(render(out))}
		},
		Meta: func(_ Args, out Outcome) any {
			if out.ExitCode == nil && out.Signal == "" && out.Output == "" {
				return nil // it never ran (bad workdir, no bash): the error says it all
			}
			return meta{Cwd: out.Cwd, ExitCode: out.ExitCode, Signal: out.Signal, TimedOut: out.TimedOut,
				TimeoutMs: out.TimeoutMs, Limit: out.Limit, DurationMs: out.DurationMs, Output: out.Output,
				OutputTruncated: out.OutputTruncated, Truncated: out.Truncated(),
				StdoutSpill: out.Stdout.SpillPath, StderrSpill: out.Stderr.SpillPath, SandboxRefused: out.SandboxRefused}
		},
		PresentCall: func(in Args) registry.View {
			return registry.TerminalCard{Command: in.Command, Cwd: in.Workdir, Description: in.Description}
		},
		PresentResult: presentResult,
		Permission:    permission,
		// bash is never concurrency-safe: commands share the workspace.
	}
}

func presentResult(in Args, r registry.Result) registry.View {
	card := registry.TerminalCard{Command: in.Command, Cwd: in.Workdir, Description: in.Description}
	var m meta
	if len(r.Meta) > 0 && json.Unmarshal(r.Meta, &m) == nil {
		card.Cwd = m.Cwd
		card.Output, card.ExitCode, card.Signal = m.Output, m.ExitCode, m.Signal
		card.TimedOut, card.Truncated = m.TimedOut, m.Truncated || m.OutputTruncated
		switch {
		case r.Code == registry.CodeToolTimeout:
			// A configured limit (timeouts:) stopped it; its failure text
			// names the limit and where it is set (pipeline.TimeoutBy).
			card.TimedOut, card.Stopped = true, strings.TrimPrefix(r.Text(), "Error: ")
		case m.TimedOut && m.Limit != "":
			card.Stopped = timedOut(m.TimeoutMs, m.Limit)
		}
		return card
	}
	if r.Code == "ABORTED" {
		// Cancelled mid-run: the group got SIGTERM. Keep the terminal (and
		// the output it streamed) and show how it ended.
		card.Signal = "SIGTERM"
		return card
	}
	// The command never ran (denied, rejected, bad workdir): the error text.
	return registry.GenericCard{Kind: "execute", Content: []registry.Content{registry.Text(fence(r.Text()))}}
}

// render is the model's text: stdout, then stderr, then where cut output
// went, then how the command ended. Colour and cursor codes are noise to a
// model (and cost tokens): they go; the terminal card keeps them.
func render(o Outcome) string {
	if o.Job != "" {
		return "Started in the background as " + o.Job + " (in " + o.Cwd + "). Read its output with job_output, stop it with job_stop; it ends when the session closes."
	}
	var parts []string
	if out := strings.TrimRight(ansi.Strip(o.Stdout.Text), "\n"); out != "" {
		parts = append(parts, out)
	}
	if out := strings.TrimRight(ansi.Strip(o.Stderr.Text), "\n"); out != "" {
		parts = append(parts, "[stderr]\n"+out)
	}
	if len(parts) == 0 {
		parts = append(parts, "(no output)")
	}
	for _, s := range []StreamResult{o.Stdout, o.Stderr} {
		if n := s.note(); n != "" {
			parts = append(parts, n)
		}
	}
	switch {
	case o.TimedOut && o.Limit != "":
		parts = append(parts, "["+timedOut(o.TimeoutMs, o.Limit)+"]")
	case o.TimedOut:
		parts = append(parts, fmt.Sprintf("[timed out after %dms]", o.TimeoutMs))
	}
	switch {
	case o.Signal != "":
		parts = append(parts, "[killed by signal: "+o.Signal+"]")
	case o.ExitCode != nil:
		parts = append(parts, fmt.Sprintf("[exit code: %d]", *o.ExitCode))
	}
	return strings.Join(parts, "\n")
}

// timedOut says the command's own limit stopped it, and where that limit
// was set.
func timedOut(ms int64, limit string) string {
	return "timed out, " + registry.StoppedAfter(time.Duration(ms)*time.Millisecond, limit)
}

// limitSource is where a command's own limit comes from: the call's
// timeout_ms (capped at the tool's maximum), else the tool's default.
func limitSource(in Args, o Options) string {
	switch {
	case in.TimeoutMs <= 0:
		return "the bash tool's default limit (the call gave no timeout_ms)"
	case time.Duration(in.TimeoutMs)*time.Millisecond > o.MaxTimeout:
		return fmt.Sprintf("the timeout_ms argument of this call, capped at the bash tool's maximum of %s", registry.ShortDuration(o.MaxTimeout))
	}
	return "the timeout_ms argument of this call"
}

func fence(s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + "console\n" + strings.TrimRight(s, "\n") + "\n" + ticks
}

// workdir resolves the model's workdir against the session cwd.
func workdir(c *registry.Call, w string) string {
	switch {
	case w == "":
		return c.Cwd
	case filepath.IsAbs(w):
		return filepath.Clean(w)
	}
	return filepath.Join(c.Cwd, w)
}

func run(ctx context.Context, c *registry.Call, in Args, o Options) (Outcome, error) {
	if strings.TrimSpace(in.Command) == "" {
		return Outcome{}, registry.Errorf("INVALID_ARGS", "invalid command: expected a non-empty string")
	}
	cwd := workdir(c, in.Workdir)
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return Outcome{}, registry.Errorf("BASH_WORKDIR", fmt.Sprintf("workdir %s is not a directory", cwd))
	}
	if in.RunInBackground {
		return startJob(ctx, c, in, cwd, o)
	}
	timeout := o.DefaultTimeout
	if in.TimeoutMs > 0 {
		timeout = min(time.Duration(in.TimeoutMs)*time.Millisecond, o.MaxTimeout)
	}
	out := Outcome{Cwd: cwd, TimeoutMs: timeout.Milliseconds()}

	cmd, pol, err := shellCommand(ctx, in.Command, cwd, o.env)
	if err != nil {
		return out, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return out, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return out, err
	}
	growPipe(outW)
	growPipe(errW)
	cmd.Stdout, cmd.Stderr = outW, errW // stdin nil: /dev/null
	if o.stdin != nil {
		cmd.Stdin = bytes.NewReader(o.stdin)
	}

	if dc, ok := c.Files.(DiskChanges); ok {
		end := dc.BeginDiskChanges()
		defer end()
	}
	started := time.Now()
	// Its own group, which dies with the bridge even when the bridge is
	// killed outright.
	group, err := procgroup.Start(cmd)
	outW.Close() // the child has its copies; EOF comes when every holder closes
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return out, registry.Errorf("BASH_SPAWN", "could not start bash: "+err.Error())
	}
	defer group.Release()

	col := newCollector(c.Output, o)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); col.copy(outR, col.stdout, o.ChunkBytes) }()
	go func() { defer readers.Done(); col.copy(errR, col.stderr, o.ChunkBytes) }()

	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	timer := time.NewTimer(timeout)
	aborted := false
	select {
	case <-exited:
		timer.Stop()
		killStragglers(group, o.KillGrace)
	case <-timer.C:
		out.TimedOut = true
		terminate(group, exited, o.KillGrace)
	case <-ctx.Done():
		timer.Stop()
		aborted = true
		grace := o.CancelGrace
		if errors.Is(context.Cause(ctx), registry.ErrShutdown) {
			grace = shutdownGrace // the editor is gone: nobody waits for a clean stop
		}
		terminate(group, exited, grace)
	}
	// A process that left the group (setsid) may still hold a pipe: stop
	// waiting for it after a second and close our ends.
	readersDone := make(chan struct{})
	go func() { readers.Wait(); close(readersDone) }()
	select {
	case <-readersDone:
	case <-time.After(time.Second):
		outR.Close()
		errR.Close()
		<-readersDone
	}
	outR.Close()
	errR.Close()

	out.DurationMs = time.Since(started).Milliseconds()
	out.ExitCode, out.Signal = exitStatus(cmd.ProcessState)
	out.Stdout, out.Stderr = col.stdout.result(), col.stderr.result()
	out.Output, out.OutputTruncated = col.combined.String(), col.combined.truncated()
	if aborted {
		return out, registry.Errorf("ABORTED", "tool call aborted")
	}
	if out.ExitCode != nil {
		if line, ok := sandbox.Refusal(pol, cwd, *out.ExitCode, out.Stderr.Text+"\n"+out.Stdout.Text); ok {
			out.SandboxRefused = line
			return out, registry.Errorf(sandbox.CodeRefused, render(out)+"\n"+refusalNote(pol, line))
		}
	}
	return out, nil
}

// shellCommand is `bash -c line` in cwd, with the scrubbed environment and
// env added, under the sandbox policy of its call (sandbox.Wrap), not yet
// started: the one way the tool makes the process of a command, in the
// foreground or as a job. Not CommandContext: cancellation must take down
// the whole group, with a grace period, which the caller does. A policy
// the platform cannot enforce fails the call: the command never runs
// unconfined unless the user chose mode off.
func shellCommand(ctx context.Context, line, cwd string, env []string) (*exec.Cmd, *sandbox.Policy, error) {
	shell, err := Find()
	if err != nil {
		return nil, nil, registry.Errorf("BASH_SPAWN", err.Error())
	}
	cmd := exec.Command(shell, "-c", line)
	cmd.Dir = cwd
	cmd.Env = append(scrubbedEnv(), env...)
	pol := sandbox.PolicyFrom(ctx)
	if err := sandbox.Wrap(cmd, pol); err != nil {
		return nil, nil, registry.Errorf(sandbox.CodeUnavailable, fmt.Sprintf("the command was not run: %v. Commands run unconfined only with sandbox mode off (the mode picker, --sandbox off or sandbox.mode: off)", err))
	}
	return cmd, pol, nil
}

// refusalNote tells the model what the sandbox refused, and why.
func refusalNote(pol *sandbox.Policy, line string) string {
	return fmt.Sprintf("[refused by the sandbox (%s): %s]", pol.Describe(), line)
}

// collector receives both streams. One lock orders them, so the live
// output and the combined tail see chunks in the order they arrived.
type collector struct {
	mu       sync.Mutex
	emit     func([]byte)
	stdout   *stream
	stderr   *stream
	combined *tailBuffer
}

func newCollector(emit func([]byte), o Options) *collector {
	return &collector{emit: emit,
		stdout:   newStream("stdout", o.TailBytes, o.SpillDir, o.MaxSpillBytes),
		stderr:   newStream("stderr", o.TailBytes, o.SpillDir, o.MaxSpillBytes),
		combined: newTailBuffer(o.TailBytes)}
}

func (c *collector) copy(r io.Reader, s *stream, chunk int) {
	buf := make([]byte, chunk)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.add(s, buf[:n])
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				c.add(s, []byte("\n[reading output failed: "+err.Error()+"]\n"))
			}
			return
		}
	}
}

func (c *collector) add(s *stream, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Write(p)
	c.combined.Write(p)
	if c.emit != nil {
		// The listener may keep the chunk (coalescing): give it its own copy.
		c.emit(bytes.Clone(p))
	}
}
