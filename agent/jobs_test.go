package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/jobs"
	"github.com/acp-bridge/acp-bridge/session"
)

// TestJobOutputCoalesced: a background job's output reaches the session as
// a call's does, coalesced (not an event per write: at most one per
// OutputInterval, plus the first), all of it, and none after the job's end.
func TestJobOutputCoalesced(t *testing.T) {
	var mu sync.Mutex
	var evs []session.Event
	tb := jobs.New(newJobEvents(func(_ context.Context, e session.Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	}))
	job, err := tb.Add(jobs.Spec{CardID: "c1-job", Tool: "bash"}, func() {})
	if err != nil {
		t.Fatal(err)
	}
	const writes = 500 // 500 * 12 bytes: less than one update holds
	var want strings.Builder
	start := time.Now()
	for i := range writes {
		line := fmt.Sprintf("line %6d\n", i)
		want.WriteString(line)
		job.Write([]byte(line))
	}
	elapsed := time.Since(start)
	job.End("exit code 0", nil)

	mu.Lock()
	defer mu.Unlock()
	if len(evs) < 3 {
		t.Fatalf("%d events: %v", len(evs), evs)
	}
	if _, ok := evs[0].Payload.(session.JobStart); !ok {
		t.Errorf("first event %T, want JobStart", evs[0].Payload)
	}
	if _, ok := evs[len(evs)-1].Payload.(session.JobEnd); !ok {
		t.Errorf("last event %T, want JobEnd: output after the end", evs[len(evs)-1].Payload)
	}
	var got strings.Builder
	outputs := 0
	for _, e := range evs[1 : len(evs)-1] {
		o, ok := e.Payload.(session.JobOutput)
		if !ok || o.CardID != "c1-job" {
			t.Fatalf("event %T %+v between the start and the end", e.Payload, e.Payload)
		}
		outputs++
		got.WriteString(o.Data)
	}
	if got.String() != want.String() {
		t.Errorf("output sent is %d bytes, want the %d written", got.Len(), want.Len())
	}
	// One update when the first write came, one per interval the writes
	// took, and the last at the end: the bound follows from the time the
	// writes actually took, however busy the machine.
	if bound := 2 + int(elapsed/OutputInterval); outputs > bound || outputs >= writes {
		t.Errorf("%d output events for %d writes in %v, want at most %d", outputs, writes, elapsed, bound)
	}
}
