//go:build unix

package bash

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/registry"
)

type liveOutput struct {
	mu sync.Mutex
	b  strings.Builder
	n  int
}

func (l *liveOutput) add(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	l.n++
}

func (l *liveOutput) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// call runs the bash tool as the pipeline would: validated args, one Call.
func call(t *testing.T, ctx context.Context, o *Options, cwd string, args Args, live *liveOutput) (registry.Result, error) {
	t.Helper()
	d, err := registry.Define(Tool(o))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	if err := d.Validate(raw); err != nil {
		t.Fatalf("validate %s: %v", raw, err)
	}
	c := &registry.Call{ID: "call_1", Name: "bash", Args: raw, Cwd: cwd, Roots: []string{cwd}}
	if live != nil {
		c.Output = live.add
	}
	return d.Run(ctx, c)
}

func decodeMeta(t *testing.T, r registry.Result) meta {
	t.Helper()
	var m meta
	if err := json.Unmarshal(r.Meta, &m); err != nil {
		t.Fatalf("meta %s: %v", r.Meta, err)
	}
	return m
}

func TestRun(t *testing.T) {
	t.Setenv("ACP_TEST_API_KEY", "hunter2")
	t.Setenv("MY_PASSWORD_FILE", "x")
	t.Setenv("ACP_TEST_PLAIN", "visible")
	t.Setenv("PAGER", "less")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     Args
		wantText string // exact model text
		wantExit int
	}{
		{"stdout", Args{Command: "echo hello"}, "hello\n[exit code: 0]", 0},
		{"stderr after stdout", Args{Command: "echo out; echo err >&2"}, "out\n[stderr]\nerr\n[exit code: 0]", 0},
		{"no output", Args{Command: "true"}, "(no output)\n[exit code: 0]", 0},
		{"non-zero exit is a result", Args{Command: "echo failing; exit 3"}, "failing\n[exit code: 3]", 3},
		{"stdin is empty", Args{Command: "cat; echo done"}, "done\n[exit code: 0]", 0},
		{"credentials scrubbed", Args{Command: `echo "[$ACP_TEST_API_KEY][$MY_PASSWORD_FILE][$ACP_TEST_PLAIN]"`}, "[][][visible]\n[exit code: 0]", 0},
		{"forced environment", Args{Command: `echo $NO_COLOR $TERM $PAGER $GIT_PAGER`}, "1 dumb cat cat\n[exit code: 0]", 0},
		{"relative workdir", Args{Command: "basename $PWD", Workdir: "sub"}, "sub\n[exit code: 0]", 0},
		{"own process group", Args{Command: `[ "$(ps -o pgid= $$ | tr -d ' ')" = "$$" ] && echo leader`}, "leader\n[exit code: 0]", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := call(t, t.Context(), nil, dir, tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Text(); got != tt.wantText {
				t.Errorf("text:\n%q\nwant\n%q", got, tt.wantText)
			}
			m := decodeMeta(t, r)
			if m.ExitCode == nil || *m.ExitCode != tt.wantExit {
				t.Errorf("exit code %v, want %d", m.ExitCode, tt.wantExit)
			}
			if r.IsError {
				t.Errorf("IsError set for a command that ran")
			}
		})
	}
}

func TestRunBadWorkdir(t *testing.T) {
	_, err := call(t, t.Context(), nil, t.TempDir(), Args{Command: "true", Workdir: "missing"}, nil)
	var te *registry.Error
	if err == nil || !asToolError(err, &te) || te.Code != "BASH_WORKDIR" {
		t.Fatalf("err = %v, want BASH_WORKDIR", err)
	}
}

func asToolError(err error, te **registry.Error) bool {
	e, ok := err.(*registry.Error)
	*te = e
	return ok
}

func TestLiveOutputInArrivalOrder(t *testing.T) {
	var live liveOutput
	// Sleeps force the order the chunks reach us in.
	cmd := "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three"
	r, err := call(t, t.Context(), nil, t.TempDir(), Args{Command: cmd}, &live)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := live.String(), "one\ntwo\nthree\n"; got != want {
		t.Errorf("live output %q, want %q", got, want)
	}
	if m := decodeMeta(t, r); m.Output != "one\ntwo\nthree\n" {
		t.Errorf("card output %q", m.Output)
	}
	if got, want := r.Text(), "one\nthree\n[stderr]\ntwo\n[exit code: 0]"; got != want {
		t.Errorf("model text %q, want %q", got, want)
	}
}

func TestTruncationSpillsFullOutput(t *testing.T) {
	o := &Options{TailBytes: 1000, SpillDir: t.TempDir()}
	// 5,000 numbered lines: far more than the 1,000-byte tail.
	r, err := call(t, t.Context(), o, t.TempDir(), Args{Command: "seq 1 5000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := r.Text()
	if !strings.Contains(text, "\n5000\n") || strings.HasPrefix(text, "1\n") {
		t.Errorf("want the tail only, got %q…", text[:min(len(text), 80)])
	}
	m := decodeMeta(t, r)
	if !m.Truncated || m.StdoutSpill == "" {
		t.Fatalf("meta %+v: want truncated with a spill file", m)
	}
	if !strings.Contains(text, "[output truncated; full output: "+m.StdoutSpill+"]") {
		t.Errorf("text does not name the spill file: %q", text[len(text)-200:])
	}
	full, err := os.ReadFile(m.StdoutSpill)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 1; i <= 5000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	if string(full) != want.String() {
		t.Errorf("spill file has %d bytes, want %d (the whole output)", len(full), want.Len())
	}
	// The kept tail starts on a line boundary.
	first, _, _ := strings.Cut(text, "\n")
	if _, err := strconv.Atoi(first); err != nil {
		t.Errorf("tail starts mid-line: %q", first)
	}
}

func TestSpillCap(t *testing.T) {
	o := &Options{TailBytes: 100, MaxSpillBytes: 1000, SpillDir: t.TempDir()}
	r, err := call(t, t.Context(), o, t.TempDir(), Args{Command: "head -c 5000 /dev/zero | tr '\\0' x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeMeta(t, r)
	st, err := os.Stat(m.StdoutSpill)
	if err != nil || st.Size() != 1000 {
		t.Fatalf("spill file: %v, size %d, want 1000", err, st.Size())
	}
	if want := "[output truncated; the first 1000 of 5000 bytes are in: " + m.StdoutSpill + "]"; !strings.Contains(r.Text(), want) {
		t.Errorf("text %q lacks %q", r.Text(), want)
	}
}

// gone reports whether pid no longer runs (absent, or a zombie nobody reaped yet).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	// The state follows the ")" that ends the command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

func readPids(t *testing.T, dir string, names ...string) []int {
	t.Helper()
	var pids []int
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatalf("pid file %s: %v", n, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// family starts a child and a grandchild that would sleep for minutes, and
// writes their pids once both run.
const family = `sleep 300 & echo $! > child.pid
bash -c 'sleep 300 & echo $! > grandchild.pid; wait' &
while [ ! -s grandchild.pid ]; do sleep 0.01; done
echo started
wait`

func assertGone(t *testing.T, dir string) {
	t.Helper()
	pids := readPids(t, dir, "child.pid", "grandchild.pid")
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still running after the call returned", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	// Long enough for the family to start on a loaded machine.
	r, err := call(t, t.Context(), &Options{KillGrace: 500 * time.Millisecond}, dir, Args{Command: family, TimeoutMs: 3000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 8*time.Second {
		t.Errorf("took %v", el)
	}
	assertGone(t, dir)
	m := decodeMeta(t, r)
	if !m.TimedOut || m.Signal != "SIGTERM" || m.ExitCode != nil {
		t.Errorf("meta %+v: want timed out, SIGTERM", m)
	}
	if !strings.HasSuffix(r.Text(), "started\n[timed out, stopped after 3s: the timeout_ms argument of this call]\n[killed by signal: SIGTERM]") {
		t.Errorf("text %q", r.Text())
	}
	if v := presentResult(Args{Command: family}, r); v.(registry.TerminalCard).Signal != "SIGTERM" || !v.(registry.TerminalCard).TimedOut ||
		v.(registry.TerminalCard).Stopped != "timed out, stopped after 3s: the timeout_ms argument of this call" {
		t.Errorf("card %+v", v)
	}
}

func TestCancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	var live liveOutput
	go func() {
		for !strings.Contains(live.String(), "started") {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := call(t, ctx, &Options{CancelGrace: 500 * time.Millisecond}, dir, Args{Command: family}, &live)
	var te *registry.Error
	if !asToolError(err, &te) || te.Code != "ABORTED" || te.Message != "tool call aborted" {
		t.Fatalf("err = %v, want ABORTED tool call aborted", err)
	}
	assertGone(t, dir)
}

// daemon starts a process in a session of its own that ignores SIGTERM and
// SIGHUP and whose parent exits (what nohup, daemonize and dev-server
// scripts do), its pid in daemon.pid.
const daemon = `(setsid bash -c 'trap "" TERM HUP; echo $$ > daemon.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &)
while [ ! -s daemon.pid ]; do sleep 0.01; done
echo started
`

// TestDaemonsDoNotOutliveTheCall: the daemon left the process group and
// lost its parent, and still ends with the call, however the call ends.
func TestDaemonsDoNotOutliveTheCall(t *testing.T) {
	for _, tt := range []struct {
		name    string
		command string
		cancel  bool
	}{
		{"the command finishes", daemon, false},
		{"the call is cancelled", daemon + "sleep 300", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var live liveOutput
			if tt.cancel {
				go func() {
					for !strings.Contains(live.String(), "started") {
						time.Sleep(5 * time.Millisecond)
					}
					cancel()
				}()
			}
			_, err := call(t, ctx, &Options{KillGrace: 300 * time.Millisecond}, dir, Args{Command: tt.command}, &live)
			if tt.cancel != (err != nil) {
				t.Fatalf("err = %v", err)
			}
			pid := readPids(t, dir, "daemon.pid")[0]
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if !gone(pid) {
				t.Errorf("daemon %d still runs after the call returned", pid)
			}
		})
	}
}

func TestSIGKILLAfterGrace(t *testing.T) {
	dir := t.TempDir()
	// The shell ignores SIGTERM (and so do the children it starts).
	cmd := "trap '' TERM; " + family
	start := time.Now()
	r, err := call(t, t.Context(), &Options{KillGrace: 300 * time.Millisecond}, dir, Args{Command: cmd, TimeoutMs: 2000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, dir)
	if el := time.Since(start); el < 2300*time.Millisecond {
		t.Errorf("returned after %v: the grace was not waited", el)
	}
	if m := decodeMeta(t, r); m.Signal != "SIGKILL" || !m.TimedOut {
		t.Errorf("meta %+v: want SIGKILL after timeout", m)
	}
}

func TestBackgroundChildrenDoNotOutliveCall(t *testing.T) {
	dir := t.TempDir()
	// The shell exits at once; its children hold the output pipe open.
	cmd := `sleep 300 & echo $! > child.pid; bash -c 'sleep 300 & echo $! > grandchild.pid' ; echo bye`
	start := time.Now()
	r, err := call(t, t.Context(), &Options{KillGrace: 500 * time.Millisecond}, dir, Args{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, dir)
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v", el)
	}
	if r.Text() != "bye\n[exit code: 0]" {
		t.Errorf("text %q", r.Text())
	}
}

func TestTimeoutClamp(t *testing.T) {
	r, err := call(t, t.Context(), &Options{MaxTimeout: 200 * time.Millisecond, KillGrace: 100 * time.Millisecond},
		t.TempDir(), Args{Command: "sleep 5", TimeoutMs: 600_000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := decodeMeta(t, r); !m.TimedOut || m.TimeoutMs != 200 {
		t.Errorf("meta %+v: want timeout clamped to 200ms", m)
	}
}

func TestPermission(t *testing.T) {
	tests := []struct {
		cmd, key, subject string
	}{
		{"go test ./...", "bash:go test", "`go test` commands"},
		{"git status", "bash:git status", "`git status` commands"},
		{"ls -la", "bash:ls", "`ls` commands"},
		{"npm run-script build", "bash:npm run-script", "`npm run-script` commands"},
		{"echo from the program", "bash:echo from", "`echo from` commands"},
		{"go test && rm -rf ~", "bash:go test && rm -rf ~", "exactly `go test && rm -rf ~`"},
		{"go test; curl x | sh", "bash:go test; curl x | sh", "exactly `go test; curl x | sh`"},
		{"echo $(whoami)", "bash:echo $(whoami)", "exactly `echo $(whoami)`"},
		{"PATH=/tmp go test", "bash:PATH=/tmp go test", "exactly `PATH=/tmp go test`"},
		{"cat > out.txt", "bash:cat > out.txt", "exactly `cat > out.txt`"},
		{"go test\nrm x", "bash:go test\nrm x", "this exact command"},
		{`git commit -m "fix the bug; really"`, "bash:git commit", "`git commit` commands"},
		{`go test -run 'A|B' ./...`, "bash:go test", "`go test` commands"},
		{`git commit -m "$(rm -rf ~)"`, `bash:git commit -m "$(rm -rf ~)"`, "exactly `git commit -m \"$(rm -rf ~)\"`"},
		{"echo \"`id`\"", "bash:echo \"`id`\"", "exactly `echo \"`id`\"`"},
		{`'rm' -rf x`, `bash:'rm' -rf x`, "exactly `'rm' -rf x`"},
		{`echo 'unterminated`, `bash:echo 'unterminated`, "exactly `echo 'unterminated`"},
		{`echo a\;b`, `bash:echo a\;b`, "exactly `echo a\\;b`"},
		{"ls *.go", "bash:ls", "`ls` commands"},
		// The lines where this lexer and the rules' disagreed: one lexer
		// (rules.PlainCommands) now judges both.
		{"go test 2>&1", "bash:go test", "`go test` commands"},
		{"echo {a,b}", "bash:echo {a,b}", "exactly `echo {a,b}`"},
		{"1A=1 make", "bash:1A=1 make", "`1A=1 make` commands"}, // no assignment: the shell runs 1A=1
		{"_A1=x make", "bash:_A1=x make", "exactly `_A1=x make`"},
		{"go test 2>&1 | tee log", "bash:go test 2>&1 | tee log", "exactly `go test 2>&1 | tee log`"},
		{"/opt/some/very/long/toolchain/path/bin/compiler build", "bash:/opt/some/very/long/toolchain/path/bin/compiler build", "commands of this program"},
		{"for f in *.go; do gofmt -l \"$f\"; done && echo all formatted", "bash:for f in *.go; do gofmt -l \"$f\"; done && echo all formatted", "this exact command"},
	}
	for _, tt := range tests {
		p := permission(&registry.Call{}, Args{Command: tt.cmd})
		if p == nil || p.Key != tt.key || p.Subject != tt.subject {
			t.Errorf("%q: got %+v, want key %q subject %q", tt.cmd, p, tt.key, tt.subject)
		}
		if n := utf8.RuneCountInString(p.Subject); n > maxSubject {
			t.Errorf("%q: subject %q has %d runes: the option name would be cut", tt.cmd, p.Subject, n)
		}
	}
}

func TestPermissionOutsideRoots(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	c := &registry.Call{Cwd: root, Roots: []string{root}}
	tests := []struct {
		workdir, key string
	}{
		{"", "bash:go test"},
		{".", "bash:go test"},
		{outside, "bash:go test @ " + outside},
		{"out", "bash:go test @ " + outside}, // a symlink leading out counts as outside
		{"..", "bash:go test @ " + filepath.Dir(root)},
	}
	for _, tt := range tests {
		p := permission(c, Args{Command: "go test", Workdir: tt.workdir})
		if p.Key != tt.key {
			t.Errorf("workdir %q: key %q, want %q", tt.workdir, p.Key, tt.key)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		cap    int
		writes []string
		want   string
	}{
		{10, []string{"abc", "def"}, "abcdef"},
		{5, []string{"abc", "def"}, "bcdef"},
		{5, []string{"abcdefgh"}, "defgh"},
		{5, []string{"ab", "cd", "ef", "gh", "i"}, "efghi"},
		{8, []string{"line1\nli", "ne2\n"}, "line2\n"}, // cut mid-line: resumes after the break
		{4, []string{"xx\u00e9\u00e9"}, "\u00e9\u00e9"},
		{4, []string{"x\u00e9\u00e9"}, "\u00e9\u00e9"},
		{3, []string{"x\u00e9\u00e9"}, "\u00e9"}, // half a rune is dropped
	}
	for _, tt := range tests {
		b := newTailBuffer(tt.cap)
		for _, w := range tt.writes {
			b.Write([]byte(w))
		}
		if got := b.String(); got != tt.want {
			t.Errorf("cap %d writes %q: got %q, want %q", tt.cap, tt.writes, got, tt.want)
		}
	}
}

func TestPresentResultNeverRan(t *testing.T) {
	v := presentResult(Args{Command: "rm -rf /"}, registry.ErrorResult("REJECTED", `the user rejected tool "bash"`))
	g, ok := v.(registry.GenericCard)
	if !ok || len(g.Content) != 1 || !strings.Contains(g.Content[0].Text, "```console\nError: the user rejected") {
		t.Errorf("got %#v", v)
	}
}

// TestTailBufferMatchesReference checks the ring against the obvious
// implementation (keep everything, slice the end) over random writes.
func TestTailBufferMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		capacity := 1 + rng.IntN(64)
		b := newTailBuffer(capacity)
		var all []byte
		for range rng.IntN(20) {
			p := make([]byte, rng.IntN(3*capacity))
			for i := range p {
				p[i] = "ab\n\xc3\xa9"[rng.IntN(5)]
			}
			b.Write(p)
			all = append(all, p...)
		}
		want := all[max(0, len(all)-capacity):]
		if len(all) > capacity {
			want = trimFront(want)
		}
		if got := b.String(); got != string(want) {
			t.Fatalf("round %d cap %d: got %q, want %q", round, capacity, got, want)
		}
		if b.total != int64(len(all)) || b.truncated() != (len(all) > capacity) {
			t.Fatalf("round %d: total %d truncated %v for %d bytes", round, b.total, b.truncated(), len(all))
		}
	}
}

// TestTimeoutSaysWhereItWasSet: a command stopped by a time limit names the
// limit and where it was set, in the card as in the model's text: the
// call's timeout_ms (capped at the maximum), the tool's default, or a
// configured limit (the pipeline's TOOL_TIMEOUT, whose text names it).
func TestTimeoutSaysWhereItWasSet(t *testing.T) {
	o := (&Options{}).withDefaults()
	tests := []struct {
		name string
		in   Args
		want string
	}{
		{"the call's timeout_ms", Args{TimeoutMs: 1000}, "the timeout_ms argument of this call"},
		{"capped", Args{TimeoutMs: 3_600_000}, "the timeout_ms argument of this call, capped at the bash tool's maximum of 10m"},
		{"the default", Args{}, "the bash tool's default limit (the call gave no timeout_ms)"},
	}
	for _, tt := range tests {
		if got := limitSource(tt.in, o); got != tt.want {
			t.Errorf("%s: limitSource = %q, want %q", tt.name, got, tt.want)
		}
	}
	meta, _ := json.Marshal(meta{Signal: "SIGTERM", TimeoutMs: 600_000, Output: "so far\n"})
	r := registry.ErrorResult(registry.CodeToolTimeout, "tool call timed out, stopped after 1s: timeouts.bash in /c.yaml")
	r.Meta = meta
	card := presentResult(Args{Command: "sleep 9"}, r).(registry.TerminalCard)
	if !card.TimedOut || card.Stopped != "tool call timed out, stopped after 1s: timeouts.bash in /c.yaml" || card.Output != "so far\n" {
		t.Errorf("a configured limit's card: %+v", card)
	}
}
