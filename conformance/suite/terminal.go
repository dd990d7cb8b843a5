package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// terminals emulates the client's terminal/* methods with real processes,
// so an agent that runs commands through the editor gets real output.
type terminals struct {
	root string
	mu   sync.Mutex
	n    int
	byID map[string]*terminal
}

type terminal struct {
	cmd   *exec.Cmd
	limit int
	done  chan struct{}

	mu        sync.Mutex
	out       []byte
	truncated bool
	exit      map[string]any // {exitCode, signal} once exited
}

func newTerminals(root string) *terminals {
	return &terminals{root: root, byID: map[string]*terminal{}}
}

// Write keeps at most limit bytes, dropping from the start at a character
// boundary, as the protocol asks of outputByteLimit.
func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = append(t.out, p...)
	if t.limit > 0 && len(t.out) > t.limit {
		cut := len(t.out) - t.limit
		for cut < len(t.out) && !utf8.RuneStart(t.out[cut]) {
			cut++
		}
		t.out = append([]byte(nil), t.out[cut:]...)
		t.truncated = true
	}
	return len(p), nil
}

func (ts *terminals) serve(ctx context.Context, method string, p map[string]json.RawMessage) (any, *RPCError) {
	if method == "terminal/create" {
		return ts.create(p)
	}
	id := str(p["terminalId"])
	ts.mu.Lock()
	t := ts.byID[id]
	ts.mu.Unlock()
	if t == nil {
		return nil, invalidParams(fmt.Sprintf("unknown terminalId %q", id))
	}
	switch method {
	case "terminal/output":
		t.mu.Lock()
		defer t.mu.Unlock()
		res := map[string]any{"output": string(t.out), "truncated": t.truncated}
		if t.exit != nil {
			res["exitStatus"] = t.exit
		}
		return res, nil
	case "terminal/wait_for_exit":
		select {
		case <-t.done:
		case <-ctx.Done():
			return nil, &RPCError{Code: CodeCancelled, Message: "request cancelled"}
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.exit, nil
	case "terminal/kill":
		killGroup(t.cmd)
		return struct{}{}, nil
	case "terminal/release":
		killGroup(t.cmd)
		ts.mu.Lock()
		delete(ts.byID, id)
		ts.mu.Unlock()
		return struct{}{}, nil
	}
	return nil, methodNotFound(method)
}

func (ts *terminals) create(p map[string]json.RawMessage) (any, *RPCError) {
	var req struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Env     []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"env"`
		Cwd   string `json:"cwd"`
		Limit int    `json:"outputByteLimit"`
	}
	raw, _ := json.Marshal(p)
	if err := json.Unmarshal(raw, &req); err != nil || req.Command == "" {
		return nil, invalidParams("terminal/create needs a command")
	}
	if req.Cwd != "" && !filepath.IsAbs(req.Cwd) {
		return nil, invalidParams("cwd must be absolute")
	}
	var cmd *exec.Cmd
	if len(req.Args) == 0 {
		cmd = exec.Command("/bin/sh", "-c", req.Command) // Zed runs it through the user's shell
	} else {
		cmd = exec.Command(req.Command, req.Args...)
	}
	cmd.Dir = ts.root
	if req.Cwd != "" {
		cmd.Dir = req.Cwd
	}
	if len(req.Env) > 0 {
		env := cmd.Environ()
		for _, e := range req.Env {
			env = append(env, e.Name+"="+e.Value)
		}
		cmd.Env = env
	}
	ownGroup(cmd)
	// Children may keep the output pipe open after a kill; Wait gives up on
	// them after this long instead of hanging the terminal.
	cmd.WaitDelay = time.Second
	t := &terminal{cmd: cmd, limit: req.Limit, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = t, t
	if err := cmd.Start(); err != nil {
		// A command that cannot start still gets a terminal, as in a shell:
		// its output says why and it exits 127.
		t.Write([]byte(err.Error() + "\n"))
		t.exit = map[string]any{"exitCode": 127, "signal": nil}
		close(t.done)
	} else {
		go func() {
			err := cmd.Wait()
			_ = err // the exit status below says all the client reports
			status := map[string]any{"exitCode": cmd.ProcessState.ExitCode(), "signal": nil}
			if cmd.ProcessState.ExitCode() < 0 {
				// Killed by a signal; ProcessState says "signal: killed".
				status = map[string]any{"exitCode": nil, "signal": strings.TrimPrefix(cmd.ProcessState.String(), "signal: ")}
			}
			t.mu.Lock()
			t.exit = status
			t.mu.Unlock()
			close(t.done)
		}()
	}
	ts.mu.Lock()
	ts.n++
	id := fmt.Sprintf("term-%d", ts.n)
	ts.byID[id] = t
	ts.mu.Unlock()
	return map[string]any{"terminalId": id}, nil
}

// closeAll kills what the agent left running.
func (ts *terminals) closeAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for id, t := range ts.byID {
		killGroup(t.cmd)
		delete(ts.byID, id)
	}
}
