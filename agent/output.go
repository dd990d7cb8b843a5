package agent

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Live output of a running tool (bash writes it as it arrives) goes to the
// editor coalesced, because one notification per write would flood it:
//
//   - at most one update per call every OutputInterval; the first write of
//     a quiet call goes out at once, later ones wait for the interval;
//   - at most mapping.MaxOutputChunk bytes of data in one update. Output
//     arriving faster than that is not queued (the tool must never wait on
//     the editor, and memory stays bounded): the oldest pending bytes are
//     dropped and the update says how many;
//   - data is always valid UTF-8 and never split inside a character: an
//     incomplete character at the end of a write waits for the next write,
//     and bytes that are not UTF-8 become U+FFFD;
//   - Close sends what is pending at once and stops the output, and the
//     agent closes before it logs the call's result, so output never
//     follows the final update or the turn's end.

// OutputInterval is the minimum time between two live output updates of one call.
const OutputInterval = 50 * time.Millisecond

// outputCoalescer buffers one call's live output.
type outputCoalescer struct {
	send     func(data string)
	interval time.Duration
	max      int // bytes of data in one update

	// sendMu orders sends: a timer's send and Close's final send never
	// interleave, and nothing is sent after Close returns.
	sendMu sync.Mutex

	mu      sync.Mutex
	buf     []byte // pending bytes, at most max
	skipped int64  // bytes dropped since the last send
	last    time.Time
	timer   *time.Timer
	closed  bool
}

func newOutputCoalescer(send func(string), interval time.Duration, max int) *outputCoalescer {
	return &outputCoalescer{send: send, interval: interval, max: max}
}

// Write takes output; it never blocks on the editor.
func (o *outputCoalescer) Write(p []byte) {
	if len(p) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	if len(p) >= o.max {
		// Only the newest max bytes can be sent: skip the rest unbuffered.
		o.skipped += int64(len(o.buf) + len(p) - o.max)
		o.buf = append(o.buf[:0], p[len(p)-o.max:]...)
	} else {
		if over := len(o.buf) + len(p) - o.max; over > 0 {
			o.skipped += int64(over)
			o.buf = o.buf[:copy(o.buf, o.buf[over:])]
		}
		o.buf = append(o.buf, p...)
	}
	if o.skipped > 0 {
		// A cut may land inside a character: skip its remaining bytes too.
		k := 0
		for k < len(o.buf) && k < utf8.UTFMax && !utf8.RuneStart(o.buf[k]) {
			k++
		}
		o.skipped += int64(k)
		o.buf = o.buf[:copy(o.buf, o.buf[k:])]
	}
	if o.timer == nil {
		o.timer = time.AfterFunc(max(0, o.interval-time.Since(o.last)), o.tick)
	}
}

func (o *outputCoalescer) tick() {
	o.sendMu.Lock()
	defer o.sendMu.Unlock()
	o.mu.Lock()
	o.timer = nil
	if o.closed {
		o.mu.Unlock()
		return
	}
	data := o.take(false)
	if data != "" {
		o.last = time.Now()
	}
	o.mu.Unlock()
	if data != "" {
		o.send(data)
	}
}

// Close sends what is pending and drops any later output.
func (o *outputCoalescer) Close() {
	o.sendMu.Lock()
	defer o.sendMu.Unlock()
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.closed = true
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	data := o.take(true)
	o.mu.Unlock()
	if data != "" {
		o.send(data)
	}
}

// take removes the pending output and returns it as the data of one
// update. Unless final, an incomplete character at the end stays pending.
// Called with o.mu held.
func (o *outputCoalescer) take(final bool) string {
	n := len(o.buf)
	if !final {
		n -= incompleteTail(o.buf)
	}
	if n == 0 && o.skipped == 0 {
		return ""
	}
	text := strings.ToValidUTF8(string(o.buf[:n]), "\uFFFD")
	o.buf = o.buf[:copy(o.buf, o.buf[n:])]
	skipped := o.skipped
	o.skipped = 0
	return fitOutput(text, skipped, o.max)
}

// fitOutput prefixes a note about skipped bytes and cuts the front of text
// (at a character boundary) until the whole fits in max bytes. Replacement
// characters can make text longer than the bytes it came from.
func fitOutput(text string, skipped int64, max int) string {
	for {
		note := ""
		if skipped > 0 {
			note = fmt.Sprintf("\n[%d bytes of output skipped]\n", skipped)
		}
		if len(note) > max { // a bound too small for the note: data only
			note = ""
		}
		over := len(note) + len(text) - max
		if over <= 0 {
			return note + text
		}
		cut := over
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		text = text[cut:]
		skipped += int64(cut)
	}
}

// incompleteTail is the length of a character cut short at the end of b:
// a lead byte and fewer continuation bytes than it announces. Bytes that
// cannot become a character are not held back; they turn into U+FFFD.
func incompleteTail(b []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		c := b[len(b)-k]
		if !utf8.RuneStart(c) {
			continue
		}
		if c >= 0xC2 && c <= 0xF4 && !utf8.FullRune(b[len(b)-k:]) {
			return k
		}
		return 0
	}
	return 0
}
