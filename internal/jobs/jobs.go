// Package jobs is a session's table of background work: commands the model
// started to outlive their call (a dev server, a watcher, a database for its
// tests). The table keeps each job's output, gives the model what is new
// since it last read, stops a job on request, and stops every job when the
// session closes. How a job runs is its starter's (tools/bash); how it is
// shown is the session's, told through Events.
package jobs

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Events tell the session what its jobs do, to show them: Output may be
// called often and from any goroutine, never after Ended.
type Events interface {
	Started(j Info)
	Output(j Info, data []byte)
	Ended(j Info)
}

// Info is a job as the model and the user see it.
type Info struct {
	ID      string    // "job-1", unique in the table
	Spec              // what was started
	Meta    []byte    // when ended: the starter's display data for the card (JSON)
	Started time.Time //
	Running bool
	Status  string // when ended: "exit code 0", "killed by SIGTERM"
	Bytes   int64  // output so far
}

// Spec is what a starter says about a job.
type Spec struct {
	CardID  string // the editor's card for the job
	Tool    string // the tool that started it, whose presenters draw the card
	Args    []byte // the tool's arguments (JSON)
	Command string // what runs, for lists
}

// Job is one entry. The starter writes its output to it (Write), says how
// it ended (End), and gives a stop function the table calls to end it.
type Job struct {
	t    *Table
	info Info
	stop func() // ends the job and waits for it; called at most once
	// out keeps the last maxKept bytes; read is how far the model has read
	// (an offset in everything ever written).
	out      []byte
	dropped  int64
	read     int64
	stopOnce sync.Once
	done     chan struct{}
}

const maxKept = 1 << 20

// ErrClosed is returned by Add once the session is closing.
var ErrClosed = errors.New("the session is closing: no new background jobs")

// Table is one session's jobs.
type Table struct {
	ev Events

	mu     sync.Mutex
	jobs   []*Job
	next   int
	closed bool
}

// New returns an empty table that reports to ev (nil: nobody).
func New(ev Events) *Table { return &Table{ev: ev} }

// Add registers a started job. stop must make it end (and everything it
// started); the job's End says when it has.
func (t *Table) Add(s Spec, stop func()) (*Job, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	t.next++
	j := &Job{t: t, stop: stop, done: make(chan struct{}),
		info: Info{ID: "job-" + strconv.Itoa(t.next), Spec: s, Started: time.Now(), Running: true}}
	t.jobs = append(t.jobs, j)
	info := j.info
	t.mu.Unlock()
	if t.ev != nil {
		t.ev.Started(info)
	}
	return j, nil
}

// ID is the job's id.
func (j *Job) ID() string { return j.info.ID }

// Write adds output.
func (j *Job) Write(p []byte) (int, error) {
	j.t.mu.Lock()
	j.out = append(j.out, p...)
	if over := len(j.out) - maxKept; over > 0 {
		j.out = slices.Delete(j.out, 0, over)
		j.dropped += int64(over)
	}
	j.info.Bytes += int64(len(p))
	info := j.info
	j.t.mu.Unlock()
	if j.t.ev != nil {
		j.t.ev.Output(info, p)
	}
	return len(p), nil
}

// End records how the job ended, with the starter's display data for its
// card. Call it once, after its last Write.
func (j *Job) End(status string, meta []byte) {
	j.t.mu.Lock()
	if !j.info.Running {
		j.t.mu.Unlock()
		return
	}
	j.info.Running, j.info.Status, j.info.Meta = false, status, meta
	info := j.info
	close(j.done)
	j.t.mu.Unlock()
	if j.t.ev != nil {
		j.t.ev.Ended(info)
	}
}

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Tail is the last n bytes of the job's output (for its final card).
func (j *Job) Tail(n int) string {
	j.t.mu.Lock()
	defer j.t.mu.Unlock()
	return string(j.out[max(0, len(j.out)-n):])
}

func (t *Table) find(id string) (*Job, error) {
	for _, j := range t.jobs {
		if j.info.ID == id {
			return j, nil
		}
	}
	ids := make([]string, 0, len(t.jobs))
	for _, j := range t.jobs {
		ids = append(ids, j.info.ID)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no background job %q: none was started in this session", id)
	}
	return nil, fmt.Errorf("no background job %q (this session has %v)", id, ids)
}

// Read returns the output written since the last Read of the job (a note
// says how much was lost if more than the kept tail was written
// meanwhile), and the job as it is now.
func (t *Table) Read(id string) (string, Info, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	j, err := t.find(id)
	if err != nil {
		return "", Info{}, err
	}
	total := j.dropped + int64(len(j.out))
	from := j.read
	note := ""
	if from < j.dropped {
		note = fmt.Sprintf("[%d bytes of output were not kept; this is the last %d]\n", j.dropped-from, len(j.out))
		from = j.dropped
	}
	j.read = total
	return note + string(j.out[from-j.dropped:]), j.info, nil
}

// Stop ends a job and waits for it; a job that ended already is no error.
func (t *Table) Stop(id string) (Info, error) {
	t.mu.Lock()
	j, err := t.find(id)
	t.mu.Unlock()
	if err != nil {
		return Info{}, err
	}
	j.stopOnce.Do(j.stop)
	<-j.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return j.info, nil
}

// List is every job of the session, oldest first.
func (t *Table) List() []Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Info, 0, len(t.jobs))
	for _, j := range t.jobs {
		out = append(out, j.info)
	}
	return out
}

// Close stops every running job, in parallel, and refuses new ones: the
// session is closing.
func (t *Table) Close() {
	t.mu.Lock()
	t.closed = true
	jobs := slices.Clone(t.jobs)
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			j.stopOnce.Do(j.stop)
			<-j.done
		})
	}
	wg.Wait()
}
