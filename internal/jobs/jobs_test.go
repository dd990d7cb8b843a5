package jobs

import (
	"strings"
	"sync"
	"testing"
)

type recorder struct {
	mu     sync.Mutex
	output []string
	ended  []Info
}

func (r *recorder) Started(Info) {}
func (r *recorder) Output(_ Info, p []byte) {
	r.mu.Lock()
	r.output = append(r.output, string(p))
	r.mu.Unlock()
}
func (r *recorder) Ended(j Info) { r.mu.Lock(); r.ended = append(r.ended, j); r.mu.Unlock() }

// fakeJob is started by the test: stop ends it as a signal would.
func fakeJob(t *testing.T, tb *Table, card string) *Job {
	t.Helper()
	var j *Job
	j, err := tb.Add(Spec{CardID: card, Tool: "bash", Command: "serve"}, func() { j.End("killed by SIGTERM", nil) })
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestReadSinceLastTime(t *testing.T) {
	rec := &recorder{}
	tb := New(rec)
	j := fakeJob(t, tb, "c1")
	steps := []struct {
		write string
		want  string
	}{
		{"listening on :8080\n", "listening on :8080\n"},
		{"", ""},
		{"GET /\nGET /a\n", "GET /\nGET /a\n"},
	}
	for _, s := range steps {
		if s.write != "" {
			j.Write([]byte(s.write))
		}
		got, info, err := tb.Read(j.ID())
		if err != nil || got != s.want || !info.Running {
			t.Errorf("Read = %q, %+v, %v; want %q running", got, info, err, s.want)
		}
	}
	if _, _, err := tb.Read("job-9"); err == nil || !strings.Contains(err.Error(), "job-1") {
		t.Errorf("an unknown id: %v, want an error naming the jobs there are", err)
	}
	if len(rec.output) != 2 {
		t.Errorf("the session saw %d outputs, want 2", len(rec.output))
	}
}

func TestReadAfterOverflowSaysWhatWasLost(t *testing.T) {
	tb := New(nil)
	j := fakeJob(t, tb, "c")
	j.Write([]byte(strings.Repeat("x", maxKept+10)))
	got, _, _ := tb.Read(j.ID())
	if !strings.HasPrefix(got, "[10 bytes of output were not kept") || !strings.HasSuffix(got, strings.Repeat("x", maxKept)) {
		t.Errorf("Read after overflow: %q…", got[:80])
	}
}

func TestStopAndClose(t *testing.T) {
	rec := &recorder{}
	tb := New(rec)
	a, b := fakeJob(t, tb, "a"), fakeJob(t, tb, "b")
	info, err := tb.Stop(a.ID())
	if err != nil || info.Running || info.Status != "killed by SIGTERM" {
		t.Fatalf("Stop = %+v, %v", info, err)
	}
	if _, err := tb.Stop(a.ID()); err != nil {
		t.Errorf("stopping an ended job: %v", err)
	}
	tb.Close()
	select {
	case <-b.Done():
	default:
		t.Error("Close left a job running")
	}
	if _, err := tb.Add(Spec{CardID: "c"}, func() {}); err != ErrClosed {
		t.Errorf("Add after Close = %v, want ErrClosed", err)
	}
	if len(rec.ended) != 2 {
		t.Errorf("the session was told of %d ends, want 2", len(rec.ended))
	}
	if l := tb.List(); len(l) != 2 || l[0].ID != "job-1" || l[1].ID != "job-2" {
		t.Errorf("List = %+v", l)
	}
}
