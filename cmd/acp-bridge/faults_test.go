//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/session"
)

// These tests take the editor away from a running bridge (stdin EOF, a
// closed stdout) and take the disk away from a persisting one, over real
// stdio with the test binary acting as acp-bridge (see TestMain). They read
// /proc to prove that nothing the bridge started outlives it, so they are
// Linux only.

// faultBridge is a bridge whose stdout read end the test owns, so it can be
// closed under the bridge's feet, and whose exit time is recorded.
type faultBridge struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *os.File // the editor's read end
	lines   chan []byte
	stderr  *syncBuffer
	logFile string
	exited  chan struct{} // closed when the process has been reaped
	exitAt  time.Time
	waitErr error
	// saveNotices counts messages telling the user the session is no
	// longer being saved (the disk filled up).
	saveNotices int
}

func startFaultBridge(t *testing.T, args ...string) *faultBridge {
	t.Helper()
	return startFaultBridgeLogs(t, true, args...)
}

// startFaultBridgeLogs starts the bridge logging at debug level, to a log
// file when toFile, else to a stderr pipe whose read end is closed at once,
// as by an editor that stops reading it.
func startFaultBridgeLogs(t *testing.T, toFile bool, args ...string) *faultBridge {
	t.Helper()
	b := &faultBridge{t: t, lines: make(chan []byte, 4096), stderr: &syncBuffer{}, exited: make(chan struct{})}
	args = append([]string{"--log-level", "debug"}, args...)
	if toFile {
		b.logFile = filepath.Join(t.TempDir(), "bridge.log")
		args = append([]string{"--log-file", b.logFile}, args...)
	}
	b.cmd = exec.Command(os.Args[0], args...)
	b.cmd.Env = append(os.Environ(), "ACP_BRIDGE_AS_MAIN=1", "ACP_BRIDGE_STATE_DIR="+t.TempDir())
	stdin, err := b.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	b.stdin = stdin
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b.cmd.Stdout = w
	b.cmd.Stderr = b.stderr
	var errR, errW *os.File
	if !toFile {
		if errR, errW, err = os.Pipe(); err != nil {
			t.Fatal(err)
		}
		b.cmd.Stderr = errW
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !toFile {
		errW.Close()
		errR.Close()
	}
	b.stdout = r
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			b.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(b.lines)
	}()
	go func() {
		b.waitErr = b.cmd.Wait()
		b.exitAt = time.Now()
		close(b.exited)
	}()
	t.Cleanup(func() {
		b.stdin.Close()
		select {
		case <-b.exited:
		case <-time.After(10 * time.Second):
			b.cmd.Process.Kill()
			<-b.exited
			t.Errorf("the bridge did not exit within 10s of stdin closing")
		}
		if t.Failed() && b.logFile != "" {
			log, _ := os.ReadFile(b.logFile)
			t.Logf("bridge stderr:\n%s\nlog file:\n%s", b.stderr, log)
		}
	})
	return b
}

func (b *faultBridge) send(line string) error {
	_, err := io.WriteString(b.stdin, line+"\n")
	return err
}

// await reads stdout until a line satisfies ok, and returns it.
func (b *faultBridge) await(what string, ok func(line []byte) bool) []byte {
	b.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, open := <-b.lines:
			if !open {
				b.t.Fatalf("stdout closed while waiting for %s", what)
			}
			if bytes.Contains(l, []byte("no longer being saved")) {
				b.saveNotices++
			}
			if ok(l) {
				return l
			}
		case <-deadline:
			b.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (b *faultBridge) call(id, method, params string) []byte {
	b.t.Helper()
	if err := b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":%s}`, id, method, params)); err != nil {
		b.t.Fatal(err)
	}
	want := fmt.Sprintf(`"id":%q`, id)
	return b.await("the answer to "+method, func(l []byte) bool {
		return bytes.Contains(l, []byte(want)) && !bytes.Contains(l, []byte(`"method"`))
	})
}

// newSession initializes the connection and opens a session in cwd.
func (b *faultBridge) newSession(cwd string) string {
	b.t.Helper()
	b.call("init", "initialize", `{"protocolVersion":1}`)
	var r struct {
		Result struct{ SessionID string } `json:"result"`
	}
	line := b.call("new", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd))
	if json.Unmarshal(line, &r) != nil || r.Result.SessionID == "" {
		b.t.Fatalf("session/new: %s", line)
	}
	return r.Result.SessionID
}

func promptParams(sid, text string) string {
	return fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, sid, text)
}

// waitExit waits for the process to end and returns how long it took from
// since.
func (b *faultBridge) waitExit(since time.Time, limit time.Duration) time.Duration {
	b.t.Helper()
	select {
	case <-b.exited:
	case <-time.After(limit + 10*time.Second):
		b.t.Fatalf("the bridge still runs %v after the editor went away", limit+10*time.Second)
	}
	took := b.exitAt.Sub(since)
	if took > limit {
		// Logged, not failed: on a busy machine the scheduler alone can
		// stretch a clean exit past the usual figure. A bridge that does
		// not exit at all fails above.
		b.t.Logf("the bridge took %v to exit, more than the usual %v (is the machine busy?)", took, limit)
	}
	return took
}

// proc is one process as /proc/<pid>/stat shows it. start (clock ticks
// after boot) tells a process from a later one that reuses its pid.
type proc struct {
	pid, ppid, pgid int
	state           byte
	start           string
	comm            string
}

func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime: comm may hold spaces and parentheses.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgid, _ := strconv.Atoi(string(f[2]))
	return proc{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0], start: string(f[19]), comm: string(b[open+1 : end])}, true
}

// descendants lists every live process under root, at any depth.
func descendants(root int) []proc {
	names, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			if c.state != 'Z' && c.state != 'X' {
				out = append(out, c)
			}
			queue = append(queue, c.pid)
		}
	}
	return out
}

// stillRunning reports the processes of ps that still run: same pid and
// start time, not a zombie (a killed orphan that init has not reaped yet is
// gone for every purpose but the process table).
func stillRunning(ps []proc) []proc {
	var out []proc
	for _, p := range ps {
		if now, ok := readProc(p.pid); ok && now.start == p.start && now.state != 'Z' && now.state != 'X' {
			out = append(out, now)
		}
	}
	return out
}

// awaitChildren polls until the bridge has at least n descendants named
// comm, and returns all its descendants.
func awaitChildren(t *testing.T, pid, n int, comm string) []proc {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds := descendants(pid)
		got := 0
		for _, d := range ds {
			if d.comm == comm {
				got++
			}
		}
		if got >= n {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bridge has %d %q processes after 30s, want %d: %v", got, comm, n, ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isUpdate(kind string) func([]byte) bool {
	return func(l []byte) bool { return bytes.Contains(l, []byte(`"sessionUpdate":"`+kind+`"`)) }
}

// panicSigns are what a Go crash or a fatal signal leaves on stderr.
var panicSigns = []string{"panic:", "goroutine ", "fatal error", "SIGPIPE", "signal: broken pipe", "runtime."}

func checkNoPanic(t *testing.T, stderr string) {
	t.Helper()
	for _, s := range panicSigns {
		if strings.Contains(stderr, s) {
			t.Errorf("stderr holds %q:\n%s", s, stderr)
		}
	}
}

// checkExitedCleanly: the bridge returned from main rather than dying by a
// signal (a SIGPIPE death would leave its process groups running).
func checkExitedCleanly(t *testing.T, err error) {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Errorf("the bridge was killed by %v instead of shutting down", ws.Signal())
			return
		}
	}
	if err != nil {
		t.Errorf("the bridge exited with %v", err)
	}
}

// checkLogEnds: the log file holds the disconnect and ends with the last
// line serve writes, whole: the logs were flushed before the exit.
func checkLogEnds(t *testing.T, path string) {
	t.Helper()
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(log, []byte("\n")) {
		t.Errorf("the log file ends mid-line: %q", log[max(0, len(log)-200):])
	}
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	if !strings.Contains(string(log), `msg="client disconnected"`) {
		t.Errorf("the log file lacks the disconnect")
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `msg=stopped`) {
		t.Errorf("the log file does not end with the shutdown line; last line: %s", last)
	}
}

// checkGone: nothing the bridge started runs after it exited.
func checkGone(t *testing.T, before []proc) {
	t.Helper()
	if left := stillRunning(before); len(left) > 0 {
		t.Errorf("still running after the bridge exited: %+v", left)
		for _, p := range left {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// TestEditorVanishesMidTurn closes the bridge's stdin while a turn runs:
// the bridge exits within the bound, every process it started (the bash
// group and the background grandchild bash left behind) is gone, and the
// log file ends with the shutdown lines.
func TestEditorVanishesMidTurn(t *testing.T) {
	bashCall := func(command string) string {
		args, _ := json.Marshal(map[string]string{"command": command})
		return `{"parts":[{"text":"Running it."},{"tool_call":{"id":"b1","name":"bash","arguments":` + string(args) + `}}]}`
	}
	tests := []struct {
		name     string
		response string
		sleeps   int           // sleep processes to wait for before the editor goes
		limit    time.Duration // from EOF to exit
	}{
		{name: "while the model streams", response: `{"parts":[{"text":"Thinking"},{"delay_ms":300000}]}`, limit: 5 * time.Second},
		{name: "bash with a background grandchild", response: bashCall("sleep 300 & sleep 300"), sleeps: 2, limit: 5 * time.Second},
		{name: "bash streaming output", response: bashCall("sleep 300 & while :; do echo tick; sleep 0.05; done"), sleeps: 2, limit: 5 * time.Second},
		// The grandchild ignores SIGTERM: with the editor gone, bash skips
		// its 3 s kill grace (registry.ErrShutdown) and SIGKILLs it quickly.
		{name: "a grandchild ignoring SIGTERM", response: bashCall("(trap '' TERM; sleep 300) & sleep 300"), sleeps: 2, limit: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			script := writeScript(t, t.TempDir(), "script.json", tt.response)
			b := startFaultBridge(t, "--model", "script:"+script, "--permission-mode", "bypass")
			sid := b.newSession(work)
			if err := b.send(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":` + promptParams(sid, "go") + `}`); err != nil {
				t.Fatal(err)
			}
			b.await("the turn to start", isUpdate("agent_message_chunk"))
			var before []proc
			if tt.sleeps > 0 {
				before = awaitChildren(t, b.cmd.Process.Pid, tt.sleeps, "sleep")
			}
			eof := time.Now()
			b.stdin.Close()
			took := b.waitExit(eof, tt.limit)
			t.Logf("exit %v after stdin EOF (%d processes under the bridge)", took, len(before))
			checkExitedCleanly(t, b.waitErr)
			checkGone(t, before)
			checkLogEnds(t, b.logFile)
			checkNoPanic(t, b.stderr.String())
		})
	}
}

// TestBrokenStdout closes the read end of the bridge's stdout while a turn
// runs, leaving stdin open: the bridge's next write fails, and it shuts down
// on its own, killing what it started, without a panic or a death by
// SIGPIPE.
func TestBrokenStdout(t *testing.T) {
	bashCall := func(command string) string {
		args, _ := json.Marshal(map[string]string{"command": command})
		return `{"parts":[{"text":"Running it."},{"tool_call":{"id":"b1","name":"bash","arguments":` + string(args) + `}}]}`
	}
	tests := []struct {
		name     string
		response string
		sleeps   int
		// poke makes the bridge write after the pipe is closed; without it
		// the turn itself writes next.
		poke bool
	}{
		{name: "tool output streaming", response: bashCall("sleep 300 & while :; do echo tick; sleep 0.05; done"), sleeps: 2},
		{name: "model text streaming", response: `{"chunk_delay_ms":50,"parts":[{"text":"` + strings.Repeat("word ", 2000) + `"}]}`},
		{name: "a silent command, then a request", response: bashCall("sleep 300 & sleep 300"), sleeps: 2, poke: true},
		{name: "a silent model, then a request", response: `{"parts":[{"text":"Thinking"},{"delay_ms":300000}]}`, poke: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := writeScript(t, t.TempDir(), "script.json", tt.response)
			b := startFaultBridge(t, "--model", "script:"+script, "--permission-mode", "bypass")
			sid := b.newSession(t.TempDir())
			if err := b.send(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":` + promptParams(sid, "go") + `}`); err != nil {
				t.Fatal(err)
			}
			b.await("the turn to start", isUpdate("agent_message_chunk"))
			var before []proc
			if tt.sleeps > 0 {
				before = awaitChildren(t, b.cmd.Process.Pid, tt.sleeps, "sleep")
			}
			closed := time.Now()
			b.stdout.Close()
			if tt.poke {
				// The bridge may already be gone by the time this arrives.
				_ = b.send(`{"jsonrpc":"2.0","id":"poke","method":"initialize","params":{"protocolVersion":1}}`)
			}
			took := b.waitExit(closed, 5*time.Second)
			t.Logf("exit %v after stdout closed (%d processes under the bridge)", took, len(before))
			checkExitedCleanly(t, b.waitErr)
			checkGone(t, before)
			checkNoPanic(t, b.stderr.String())
			if s := withoutOffNote(b.stderr.String()); s != "" {
				t.Errorf("stderr is not empty with --log-file: %s", s)
			}
			log, _ := os.ReadFile(b.logFile)
			if !bytes.Contains(log, []byte("writing to the client failed")) {
				t.Errorf("the log does not say why the bridge stopped:\n%s", log)
			}
			checkLogEnds(t, b.logFile)
		})
	}
}

// TestCommandsKeepDefaultSIGPIPE: the bridge survives a closed stdout by
// catching SIGPIPE, and the commands it runs must not inherit anything of
// that: an ignored SIGPIPE would pass through exec and keep `yes | head`
// style pipelines writing into the void.
func TestCommandsKeepDefaultSIGPIPE(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"command": "awk '/^SigIgn/{print \"SIGIGN\" \"=\" $2}' /proc/self/status"})
	script := writeScript(t, t.TempDir(), "script.json",
		`{"parts":[{"tool_call":{"id":"b1","name":"bash","arguments":`+string(args)+`}}]}`,
		`{"parts":[{"text":"done"}]}`)
	b := startFaultBridge(t, "--model", "script:"+script, "--permission-mode", "bypass")
	sid := b.newSession(t.TempDir())
	if err := b.send(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":` + promptParams(sid, "go") + `}`); err != nil {
		t.Fatal(err)
	}
	// The command line spells the marker in two pieces, so only the
	// output holds it whole.
	const marker = "SIGIGN="
	line := b.await("the command's result", func(l []byte) bool {
		return bytes.Contains(l, []byte(`"toolCallId":"b1"`)) && bytes.Contains(l, []byte(marker))
	})
	i := bytes.Index(line, []byte(marker)) + len(marker)
	mask, err := strconv.ParseUint(string(line[i:min(i+16, len(line))]), 16, 64)
	if err != nil {
		t.Fatalf("SigIgn of the command: %v in %s", err, line)
	}
	if bit := uint64(1) << (uint(syscall.SIGPIPE) - 1); mask&bit != 0 {
		t.Errorf("commands run with SIGPIPE ignored (SigIgn %016x)", mask)
	}
}

// smallDisk mounts a tmpfs of size bytes on a fresh directory, unmounted
// when the test ends. It skips the test where mounting is not allowed.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes to a file in dir until the file system refuses.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return
		}
	}
}

// TestDiskFullWhilePersisting runs the bridge with its state directory on a
// 256 KiB file system and fills it: the log names the failure, the sessions
// go on answering in memory, and what was saved before the disk filled
// stays a readable session log.
func TestDiskFullWhilePersisting(t *testing.T) {
	// A prompt bigger than a page, so its event cannot fit in the space the
	// log file's last page still has.
	big := strings.Repeat("fill the page ", 1000)
	tests := []struct {
		name string
		// fillAfter is the number of turns that run before the disk is
		// filled; -1 fills it before session/new.
		fillAfter int
		turns     int
	}{
		{name: "full before the session starts", fillAfter: -1, turns: 2},
		{name: "full mid-session", fillAfter: 1, turns: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := smallDisk(t, 256<<10)
			var responses []string
			for i := range tt.turns {
				responses = append(responses, fmt.Sprintf(`{"parts":[{"text":"answer %d"}]}`, i+1))
			}
			script := writeScript(t, t.TempDir(), "script.json", responses...)
			b := startFaultBridge(t, "--model", "script:"+script, "--state-dir", state)
			if tt.fillAfter < 0 {
				fillDisk(t, state)
			}
			sid := b.newSession(t.TempDir())
			for i := range tt.turns {
				if i == tt.fillAfter {
					fillDisk(t, state)
				}
				id := fmt.Sprintf("p%d", i+1)
				line := b.call(id, "session/prompt", promptParams(sid, fmt.Sprintf("turn %d: %s", i+1, big)))
				if !bytes.Contains(line, []byte(`"stopReason":"end_turn"`)) {
					t.Fatalf("turn %d: %s", i+1, line)
				}
			}
			// The session still holds every turn in memory: it answers, and
			// closing it works.
			b.call("close", "session/close", fmt.Sprintf(`{"sessionId":%q}`, sid))
			b.stdin.Close()
			b.waitExit(time.Now(), 5*time.Second)
			checkExitedCleanly(t, b.waitErr)
			checkLogEnds(t, b.logFile)
			log, _ := os.ReadFile(b.logFile)
			var saw bool
			for _, l := range strings.Split(string(log), "\n") {
				// The editor is told (a notice), so the line stays under
				// the default stderr level (a client may show stderr as
				// errors).
				if strings.Contains(l, "no space left on device") && strings.Contains(l, "level=INFO") &&
					(strings.Contains(l, "will not be saved") || strings.Contains(l, "without being saved")) {
					saw = true
					t.Logf("logged: %s", l)
				}
			}
			if !saw {
				t.Errorf("the log does not name the full disk:\n%s", log)
			}
			checkNoPanic(t, b.stderr.String())

			// What was written before the disk filled is a whole log: it
			// reads without error and holds exactly the turns before.
			st, err := session.OpenStore(state, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, evs, err := st.Read(sid)
			// Not being saved is said once, in the thread, whether the
			// disk filled mid-session or before the session's log could
			// even be created.
			if b.saveNotices != 1 {
				t.Errorf("the editor was told %d times that the session is not saved, want 1", b.saveNotices)
			}
			if tt.fillAfter < 0 {
				// Not even the header fit: the log must be gone, not left
				// as a headerless file no later read accepts.
				if !errors.Is(err, session.ErrNotFound) {
					t.Errorf("a session that could not be saved left a log behind: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("the log saved before the disk filled does not read: %v", err)
			}
			ended := 0
			for _, ev := range evs {
				if ev.Type() == session.TypeTurnEnd {
					ended++
				}
			}
			if want := max(tt.fillAfter, 0); ended != want {
				t.Errorf("the saved log holds %d whole turns, want %d", ended, want)
			}
		})
	}
}

// TestToolDiesHardInARealTurn: through the real binary, a built-in tool
// whose work crashes (the command's shell killed by a fatal signal) ends
// its card failed with the signal named, the turn ends normally, and the
// next prompt is answered. Tools panicking in Go are covered at the agent
// level (agent/faults_test.go): no built-in tool can be made to panic.
func TestToolDiesHardInARealTurn(t *testing.T) {
	tests := []struct {
		name, command, want string
	}{
		{name: "segmentation fault", command: "echo before; kill -SEGV $$", want: "SIGSEGV"},
		{name: "SIGKILL", command: "kill -KILL $$", want: "SIGKILL"},
		{name: "abort", command: "kill -ABRT $$", want: "SIGABRT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": tt.command})
			script := writeScript(t, t.TempDir(), "script.json",
				`{"parts":[{"tool_call":{"id":"b1","name":"bash","arguments":`+string(args)+`}}]}`,
				`{"parts":[{"text":"the command crashed"}]}`,
				`{"parts":[{"text":"still here"}]}`)
			b := startFaultBridge(t, "--model", "script:"+script, "--permission-mode", "bypass")
			sid := b.newSession(t.TempDir())
			if err := b.send(`{"jsonrpc":"2.0","id":"p1","method":"session/prompt","params":` + promptParams(sid, "go") + `}`); err != nil {
				t.Fatal(err)
			}
			var final []byte
			end := b.await("the first turn's end", func(l []byte) bool {
				if bytes.Contains(l, []byte(`"toolCallId":"b1"`)) && bytes.Contains(l, []byte(`"status":"`)) {
					final = l
				}
				return bytes.Contains(l, []byte(`"id":"p1"`))
			})
			if !bytes.Contains(end, []byte(`"stopReason":"end_turn"`)) {
				t.Errorf("the turn with the crashed command: %s", end)
			}
			if !bytes.Contains(final, []byte(`"status":"failed"`)) || !bytes.Contains(final, []byte(tt.want)) {
				t.Errorf("the card's last update is %s; want failed, naming %s", final, tt.want)
			}
			line := b.call("p2", "session/prompt", promptParams(sid, "are you there?"))
			if !bytes.Contains(line, []byte(`"stopReason":"end_turn"`)) {
				t.Errorf("the next prompt: %s", line)
			}
			checkNoPanic(t, b.stderr.String())
		})
	}
}

// TestClosedStderrKeepsServing: stderr is only for logs, so an editor that
// closes it must cost the logs, not the session. Before SIGPIPE was caught,
// the first log line after the close killed the process.
func TestClosedStderrKeepsServing(t *testing.T) {
	script := writeScript(t, t.TempDir(), "script.json", `{"parts":[{"text":"answered"}]}`)
	b := startFaultBridgeLogs(t, false, "--model", "script:"+script)
	sid := b.newSession(t.TempDir())
	line := b.call("p", "session/prompt", promptParams(sid, "go"))
	if !bytes.Contains(line, []byte(`"stopReason":"end_turn"`)) {
		t.Errorf("prompt with stderr closed: %s", line)
	}
	b.stdin.Close()
	b.waitExit(time.Now(), 5*time.Second)
	checkExitedCleanly(t, b.waitErr)
}
