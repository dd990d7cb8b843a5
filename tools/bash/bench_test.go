//go:build unix

package bash

import (
	"encoding/json"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// coalescer stands in for the consumer that turns live output into wire
// updates: it keeps at most a bounded tail of what arrived since the last
// flush and flushes at most every interval, counting the updates it sends.
type coalescer struct {
	mu      sync.Mutex
	pending *tailBuffer
	dirty   bool
	updates int
	bytes   int64
	stop    chan struct{}
	done    chan struct{}
}

func newCoalescer(interval time.Duration) *coalescer {
	c := &coalescer{pending: newTailBuffer(64 << 10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				c.flush()
			case <-c.stop:
				c.flush()
				return
			}
		}
	}()
	return c
}

func (c *coalescer) add(p []byte) {
	c.mu.Lock()
	c.pending.Write(p)
	c.bytes += int64(len(p))
	c.dirty = true
	c.mu.Unlock()
}

func (c *coalescer) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return
	}
	_ = c.pending.String() // what one update would carry
	c.pending = newTailBuffer(64 << 10)
	c.dirty = false
	c.updates++
}

func (c *coalescer) close() { close(c.stop); <-c.done }

func peakRSSMiB(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

// BenchmarkBashYes1GiB pushes 1 GiB of output through the tool and a
// coalescing consumer flushing at most 20 times a second.
//
//	go test ./tools/bash -run '^$' -bench BashYes -benchmem -benchtime 3x
func BenchmarkBashYes1GiB(b *testing.B) {
	const size = 1 << 30
	d, err := registry.Define(Tool(&Options{SpillDir: b.TempDir()}))
	if err != nil {
		b.Fatal(err)
	}
	args, _ := json.Marshal(Args{Command: "yes | head -c 1073741824"})
	b.SetBytes(size)
	var updates int
	for b.Loop() {
		co := newCoalescer(50 * time.Millisecond)
		c := &registry.Call{ID: "bench", Name: "bash", Args: args, Cwd: b.TempDir(), Output: co.add}
		r, err := d.Run(b.Context(), c)
		co.close()
		if err != nil || r.IsError {
			b.Fatalf("%v %s", err, r.Text())
		}
		if co.bytes != size {
			b.Fatalf("consumer saw %d bytes, want %d", co.bytes, size)
		}
		updates += co.updates
	}
	b.ReportMetric(float64(updates)/float64(b.N), "updates/op")
	b.ReportMetric(peakRSSMiB(b), "peakRSS-MiB")
}
