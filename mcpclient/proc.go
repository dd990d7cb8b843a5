package mcpclient

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/procgroup"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// process is one stdio server process. We manage it ourselves rather than
// through mcp.CommandTransport so that we know when (and how) it exits,
// can kill its whole process group (servers started through npx or a shell
// leave grandchildren), and never lose its stderr.
type process struct {
	cmd    *exec.Cmd
	group  *procgroup.Group // the server and what it starts; dies with the bridge
	stdin  *os.File         // our end of its stdin
	stdout *os.File         // our end of its stdout
	stderr *tail

	exited  chan struct{} // closed once the process has been reaped
	exitErr error         // set before exited is closed
}

// startProcess runs s.Command with its stdio on pipes. Its stderr is logged
// line by line (debug: servers chat there) and its tail kept for error reports.
func startProcess(s Server, log *slog.Logger) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Dir
	// The editor's env adds to ours: servers need PATH, HOME and the like.
	cmd.Env = os.Environ()
	for _, e := range s.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}

	// os.Pipe rather than cmd.StdoutPipe: Wait closes StdoutPipe's read end,
	// which could drop the last messages of a server that exits; with our own
	// files, reaping and reading are independent.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := sandbox.Wrap(cmd, s.Sandbox); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, err
	}
	// A group of its own: servers started through npx or a shell leave
	// grandchildren, and all of them must die with the bridge.
	group, err := procgroup.Start(cmd)
	if err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, err
	}
	closeAll(inR, outW, errW) // the child has its copies
	p := &process{cmd: cmd, group: group, stdin: inW, stdout: outR, stderr: newTail(4 << 10), exited: make(chan struct{})}
	drained := make(chan struct{})
	go func() {
		p.stderr.drain(errR, log)
		close(drained)
	}()
	go func() {
		p.exitErr = cmd.Wait()
		// A server's last words explain its exit: let them arrive, but not
		// wait on a grandchild that keeps stderr open.
		select {
		case <-drained:
		case <-time.After(200 * time.Millisecond):
		}
		close(p.exited)
	}()
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// exitStatus describes how the process ended; call it after exited is closed.
func (p *process) exitStatus() string {
	if p.exitErr == nil {
		return "exit status 0"
	}
	return p.exitErr.Error()
}

// stop ends the process the way the MCP spec asks (close its stdin, wait,
// then SIGTERM, then SIGKILL), each step bounded by grace, and finally kills
// whatever is left of its process group.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	defer p.group.Release()
	defer p.group.Kill()
	select {
	case <-p.exited:
		return
	case <-time.After(grace):
	}
	_ = p.group.Terminate()
	select {
	case <-p.exited:
		return
	case <-time.After(grace):
	}
	_ = p.group.Kill()
	p.cmd.Process.Kill()
	<-p.exited
}

// tail keeps the last n bytes of a stream, cut at a line start.
type tail struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) drain(r io.ReadCloser, log *slog.Logger) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		log.Debug("mcp server stderr", "line", line)
		t.mu.Lock()
		t.buf = append(t.buf, line...)
		t.buf = append(t.buf, '\n')
		if len(t.buf) > t.n {
			t.buf = t.buf[len(t.buf)-t.n:]
			if i := strings.IndexByte(string(t.buf), '\n'); i >= 0 {
				t.buf = t.buf[i+1:]
			}
		}
		t.mu.Unlock()
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		log.Debug("mcp server stderr unreadable", "err", err)
	}
}

// String is the kept tail, trimmed.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// withStderr appends the stderr tail to a message, when there is one.
func withStderr(msg string, t *tail) string {
	if t == nil {
		return msg
	}
	if s := t.String(); s != "" {
		return fmt.Sprintf("%s; stderr: %s", msg, lastLines(s, 5))
	}
	return msg
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
