//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestBackgroundJobThroughTheBinary: a command started with
// run_in_background runs across turns, its card stays live (output after
// the turn that started it ended), its output is read since last time with
// job_output, /jobs lists it, and it ends with the session, daemon and all.
func TestBackgroundJobThroughTheBinary(t *testing.T) {
	call := func(id, name string, args any) string {
		a, _ := json.Marshal(args)
		return fmt.Sprintf(`{"parts":[{"tool_call":{"id":%q,"name":%q,"arguments":%s}}]}`, id, name, a)
	}
	server := `(setsid bash -c 'trap "" TERM HUP; echo $$ > daemon.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &)
echo $$ > job.pid; echo ready; i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.05; done`
	script := writeScript(t, t.TempDir(), "script.json",
		call("b1", "bash", map[string]any{"command": server, "run_in_background": true, "description": "a dev server"}),
		`{"parts":[{"text":"started"}]}`,
		call("o1", "job_output", map[string]string{"job": "job-1"}),
		`{"parts":[{"text":"read once"}]}`,
		call("o2", "job_output", map[string]string{"job": "job-1"}),
		`{"parts":[{"text":"read twice"}]}`,
	)
	work := t.TempDir()
	b := startFaultBridge(t, "--model", "script:"+script, "--permission-mode", "bypass")
	sid := b.newSession(work)
	if l := b.call("p1", "session/prompt", promptParams(sid, "start the server")); !bytes.Contains(l, []byte("end_turn")) {
		t.Fatalf("turn 1: %s", l)
	}
	// The job's card is live after its turn ended: output keeps coming.
	b.await("the job's card", func(l []byte) bool {
		return bytes.Contains(l, []byte(`"toolCallId":"b1-job"`)) && bytes.Contains(l, []byte("tool_call"))
	})
	b.await("live output on the job's card after the turn", func(l []byte) bool {
		return bytes.Contains(l, []byte(`"toolCallId":"b1-job"`)) && bytes.Contains(l, []byte("tick"))
	})
	job := awaitPidFile(t, filepath.Join(work, "job.pid"))
	daemon := awaitPidFile(t, filepath.Join(work, "daemon.pid"))
	t.Cleanup(func() { syscall.Kill(-job, syscall.SIGKILL); syscall.Kill(daemon, syscall.SIGKILL) })

	var first, second string
	for i, want := range []*string{&first, &second} {
		id := fmt.Sprintf("p%d", i+2)
		if err := b.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"session/prompt","params":` + promptParams(sid, "read it") + `}`); err != nil {
			t.Fatal(err)
		}
		l := b.await("job_output's result", func(l []byte) bool {
			return bytes.Contains(l, []byte(fmt.Sprintf(`"toolCallId":"o%d"`, i+1))) && bytes.Contains(l, []byte(`"status":"completed"`))
		})
		*want = string(l)
		b.await("the turn's end", func(l []byte) bool { return bytes.Contains(l, []byte(`"id":"`+id+`"`)) })
		// The read returned everything up to its last tick, N: the card
		// showing tick N+1 means the job wrote after the read, so the next
		// read has something new. (Any tick on the card is not enough: the
		// card's output is coalesced, so it can carry ticks from before.)
		last := 0
		for _, m := range tickNumber.FindAllStringSubmatch(*want, -1) {
			if n, _ := strconv.Atoi(m[1]); n > last {
				last = n
			}
		}
		next := regexp.MustCompile(fmt.Sprintf(`tick %d\D`, last+1))
		b.await(fmt.Sprintf("tick %d on the job's card, after the read", last+1), func(l []byte) bool {
			return bytes.Contains(l, []byte(`"toolCallId":"b1-job"`)) && next.Match(l)
		})
	}
	if !bytes.Contains([]byte(first), []byte("ready")) || !bytes.Contains([]byte(first), []byte("job-1 is running")) {
		t.Errorf("first read: %s", first)
	}
	if bytes.Contains([]byte(second), []byte("ready")) || !bytes.Contains([]byte(second), []byte("tick")) {
		t.Errorf("second read must hold only what is new since the first: %s", second)
	}
	b.send(`{"jsonrpc":"2.0","id":"p5","method":"session/prompt","params":` + promptParams(sid, "/jobs") + `}`)
	b.await("/jobs listing job-1", func(l []byte) bool {
		return bytes.Contains(l, []byte("job-1")) && bytes.Contains(l, []byte("running for"))
	})
	b.await("the /jobs turn's end", func(l []byte) bool { return bytes.Contains(l, []byte(`"id":"p5"`)) })

	at := time.Now()
	b.call("close", "session/close", fmt.Sprintf(`{"sessionId":%q}`, sid))
	for _, pid := range []int{job, daemon} {
		for running(pid) {
			if time.Since(at) > never {
				t.Fatalf("process %d of the job still runs %v after session/close", pid, never)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Logf("job and its daemon gone %v after session/close", time.Since(at).Round(time.Millisecond))
}

var tickNumber = regexp.MustCompile(`tick (\d+)`)
