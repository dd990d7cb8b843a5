package agent

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/mapping"
)

type sent struct {
	at   time.Duration
	data string
}

// sendRecorder collects what a coalescer sends, with the (fake) time since start.
type sendRecorder struct {
	start time.Time
	mu    sync.Mutex
	got   []sent
}

func (r *sendRecorder) send(data string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, sent{time.Since(r.start), data})
}

func (r *sendRecorder) all() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.got...)
}

func joined(ss []sent) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.data)
	}
	return b.String()
}

func TestOutputCoalescing(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes func(w func(string)) // may sleep between writes
		check  func(t *testing.T, got []sent)
	}{
		{
			name: "a quiet call's first write goes out at once, later writes wait for the interval",
			max:  1 << 16,
			writes: func(w func(string)) {
				w("a")
				time.Sleep(10 * time.Millisecond)
				w("b")
				time.Sleep(10 * time.Millisecond)
				w("c")
				time.Sleep(200 * time.Millisecond)
				w("d")
			},
			check: func(t *testing.T, got []sent) {
				want := []sent{{0, "a"}, {50 * time.Millisecond, "bc"}, {220 * time.Millisecond, "d"}}
				if len(got) != len(want) {
					t.Fatalf("got %v, want %v", got, want)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("update %d = %v, want %v", i, got[i], want[i])
					}
				}
			},
		},
		{
			name: "steady output: one update per 50 ms, nothing lost",
			max:  1 << 16,
			writes: func(w func(string)) {
				for i := range 100 {
					w(strings.Repeat(string(rune('a'+i%26)), 10))
					time.Sleep(7 * time.Millisecond)
				}
			},
			check: func(t *testing.T, got []sent) {
				for i := 1; i < len(got); i++ {
					if d := got[i].at - got[i-1].at; d < OutputInterval {
						t.Errorf("updates %d and %d only %v apart", i-1, i, d)
					}
				}
				if n := len(got); n < 13 || n > 16 { // 700 ms of output / 50 ms, plus the first and the close
					t.Errorf("%d updates for 700 ms of output", n)
				}
				if n := len(joined(got)); n != 1000 {
					t.Errorf("%d bytes arrived, want 1000", n)
				}
			},
		},
		{
			name: "a flood is cut to the newest bytes, with a note of what was skipped",
			max:  1000,
			writes: func(w func(string)) {
				// The call has just sent something, so the flood waits for
				// the interval: a quiet call's first write goes out at once,
				// on the timer's goroutine, which could otherwise run
				// between the two writes below (2 updates, seen under load).
				w("p")
				synctest.Wait()
				w(strings.Repeat("x", 5000) + strings.Repeat("y", 500))
				w(strings.Repeat("z", 300))
			},
			check: func(t *testing.T, got []sent) {
				if len(got) != 2 || got[0].data != "p" {
					t.Fatalf("got %d updates, want \"p\" and then the flood in one", len(got))
				}
				d := got[1].data
				if len(d) > 1000 || !strings.HasSuffix(d, strings.Repeat("y", 500)+strings.Repeat("z", 300)) {
					t.Errorf("update of %d bytes ends %q", len(d), d[max(0, len(d)-40):])
				}
				if !strings.HasPrefix(d, "\n[48") || !strings.Contains(d, " bytes of output skipped]\n") {
					t.Errorf("update starts %q", d[:40])
				}
			},
		},
		{
			name: "a character split across writes is never split across updates",
			max:  1 << 16,
			writes: func(w func(string)) {
				euro := "€" // 3 bytes
				w("price: " + euro[:1])
				time.Sleep(100 * time.Millisecond)
				w(euro[1:] + " 5\n")
			},
			check: func(t *testing.T, got []sent) {
				if len(got) != 2 || got[0].data != "price: " || got[1].data != "€ 5\n" {
					t.Errorf("got %+v", got)
				}
			},
		},
		{
			name: "bytes that are not UTF-8 become U+FFFD",
			max:  1 << 16,
			writes: func(w func(string)) {
				w("a\xffb\xc3(")
			},
			check: func(t *testing.T, got []sent) {
				if d := joined(got); d != "a\uFFFDb\uFFFD(" {
					t.Errorf("got %q", d)
				}
			},
		},
		{
			name: "an incomplete character at close is flushed as U+FFFD",
			max:  1 << 16,
			writes: func(w func(string)) {
				w("ok\xe2\x82")
			},
			check: func(t *testing.T, got []sent) {
				if d := joined(got); d != "ok\uFFFD" {
					t.Errorf("got %q", d)
				}
			},
		},
		{
			name: "a cut inside a multi-byte character skips the rest of it",
			max:  10,
			writes: func(w func(string)) {
				w(strings.Repeat("€", 10)) // 30 bytes; the newest 10 begin mid-character
			},
			check: func(t *testing.T, got []sent) {
				for _, s := range got {
					if !utf8.ValidString(s.data) || strings.ContainsRune(s.data, utf8.RuneError) || len(s.data) > 10 {
						t.Errorf("update %q", s.data)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &sendRecorder{start: time.Now()}
				o := newOutputCoalescer(r.send, OutputInterval, tt.max)
				tt.writes(func(s string) { o.Write([]byte(s)) })
				synctest.Wait()
				o.Close()
				tt.check(t, r.all())
			})
		})
	}
}

func TestOutputCloseFlushesAndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &sendRecorder{start: time.Now()}
		o := newOutputCoalescer(r.send, OutputInterval, 1<<16)
		o.Write([]byte("first"))
		synctest.Wait() // sent at once
		o.Write([]byte("pending"))
		o.Close() // before the interval is up: sent now, not later
		o.Write([]byte("late"))
		time.Sleep(time.Second)
		synctest.Wait()
		got := r.all()
		if len(got) != 2 || got[1].data != "pending" || got[1].at != 0 {
			t.Errorf("got %v", got)
		}
		o.Close() // a second close is harmless
	})
}

func TestOutputConcurrentWriters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &sendRecorder{start: time.Now()}
		o := newOutputCoalescer(r.send, OutputInterval, 1<<16)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 50 {
					o.Write([]byte("0123456789"))
					time.Sleep(3 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		o.Close()
		if n := len(joined(r.all())); n != 4*50*10 {
			t.Errorf("%d bytes arrived, want %d", n, 4*50*10)
		}
	})
}

// BenchmarkOutputWrite pushes output through a coalescer as fast as a
// command could write it (32 KiB writes, the real interval and bound): the
// tool never waits for the editor, and memory stays at the 64 KiB bound.
func BenchmarkOutputWrite(b *testing.B) {
	var updates, bytesSent int
	var mu sync.Mutex
	o := newOutputCoalescer(func(data string) {
		mu.Lock()
		updates++
		bytesSent += len(data)
		mu.Unlock()
	}, OutputInterval, mapping.MaxOutputChunk)
	chunk := []byte(strings.Repeat("y\n", 16<<10))
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		o.Write(chunk)
	}
	o.Close()
	mu.Lock()
	defer mu.Unlock()
	b.ReportMetric(float64(updates)/time.Since(start).Seconds(), "updates/s")
}
