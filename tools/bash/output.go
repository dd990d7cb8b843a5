package bash

import (
	"fmt"
	"os"
	"unicode/utf8"
)

// tailBuffer keeps the last cap bytes written to it, in a fixed ring, so
// memory stays bounded whatever the command prints.
type tailBuffer struct {
	buf   []byte
	start int   // index of the oldest byte once the ring is full
	full  bool  // the ring has wrapped
	total int64 // bytes ever written
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{buf: make([]byte, 0, n)} }

func (t *tailBuffer) Write(p []byte) {
	t.total += int64(len(p))
	c := cap(t.buf)
	if c == 0 {
		return
	}
	if len(p) >= c {
		t.buf = append(t.buf[:0], p[len(p)-c:]...)
		t.start, t.full = 0, true
		return
	}
	if !t.full {
		if len(t.buf)+len(p) <= c {
			t.buf = append(t.buf, p...)
			return
		}
		// Fill to capacity, then wrap the rest over the oldest bytes.
		n := c - len(t.buf)
		t.buf = append(t.buf, p[:n]...)
		p = p[n:]
		t.full, t.start = true, 0
	}
	for len(p) > 0 {
		n := copy(t.buf[t.start:], p)
		p = p[n:]
		t.start = (t.start + n) % c
	}
}

// truncated reports whether bytes were dropped from the front.
func (t *tailBuffer) truncated() bool { return t.total > int64(len(t.buf)) }

// String returns the kept bytes in order. When the front was dropped, the
// text starts at the next line (if one starts soon) or at least on a rune
// boundary, so the model never sees half a character.
func (t *tailBuffer) String() string {
	var b []byte
	if t.full {
		b = make([]byte, 0, len(t.buf))
		b = append(b, t.buf[t.start:]...)
		b = append(b, t.buf[:t.start]...)
	} else {
		b = t.buf
	}
	if t.truncated() {
		b = trimFront(b)
	}
	return string(b)
}

// trimFront drops a partial first line (when a line break comes within 1 KiB)
// or a partial first rune.
func trimFront(b []byte) []byte {
	for i := 0; i < len(b) && i < 1024; i++ {
		if b[i] == '\n' {
			return b[i+1:]
		}
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return b
}

// stream is one of the command's output streams as the model sees it: a
// bounded tail in memory and, once that overflows, a spill file with the
// output from the start (up to maxSpill bytes).
type stream struct {
	name     string // "stdout" or "stderr", for the spill file's name
	tail     *tailBuffer
	spillDir string
	maxSpill int64

	spill       *os.File
	spillPath   string
	spilled     int64
	spillFailed bool
}

func newStream(name string, tailBytes int, spillDir string, maxSpill int64) *stream {
	return &stream{name: name, tail: newTailBuffer(tailBytes), spillDir: spillDir, maxSpill: maxSpill}
}

func (s *stream) Write(p []byte) {
	if s.spill == nil && !s.spillFailed && s.tail.total+int64(len(p)) > int64(cap(s.tail.buf)) {
		s.openSpill()
	}
	if s.spill != nil && s.spilled < s.maxSpill {
		q := p[:min(int64(len(p)), s.maxSpill-s.spilled)]
		if _, err := s.spill.Write(q); err != nil {
			s.spillFailed = true
			s.closeSpill()
		}
		s.spilled += int64(len(q))
	}
	s.tail.Write(p)
}

// openSpill starts the spill file with everything written so far: the tail
// has not dropped anything yet, so it is the whole output.
func (s *stream) openSpill() {
	f, err := os.CreateTemp(s.spillDir, "acp-bridge-bash-*."+s.name)
	if err != nil {
		s.spillFailed = true
		return
	}
	head := s.tail.String()
	if _, err := f.WriteString(head); err != nil {
		f.Close()
		os.Remove(f.Name())
		s.spillFailed = true
		return
	}
	s.spill, s.spillPath, s.spilled = f, f.Name(), int64(len(head))
}

func (s *stream) closeSpill() {
	if s.spill != nil {
		s.spill.Close()
		s.spill = nil
	}
}

// result freezes the stream into what the tool returns.
func (s *stream) result() StreamResult {
	s.closeSpill()
	r := StreamResult{Text: s.tail.String(), Bytes: s.tail.total, Truncated: s.tail.truncated()}
	if r.Truncated && !s.spillFailed {
		r.SpillPath = s.spillPath
		r.SpillBytes = s.spilled
	}
	return r
}

// StreamResult is one output stream of a finished command.
type StreamResult struct {
	Text      string `json:"text"`                // the tail the model reads
	Bytes     int64  `json:"bytes"`               // everything the stream produced
	Truncated bool   `json:"truncated,omitempty"` // Text is only the tail
	// SpillPath holds the output from its start: all of it unless
	// SpillBytes < Bytes (the spill file is capped).
	SpillPath  string `json:"spill_path,omitempty"`
	SpillBytes int64  `json:"spill_bytes,omitempty"`
}

// note is the line that tells the model where the rest of a truncated stream is.
func (r StreamResult) note() string {
	switch {
	case !r.Truncated:
		return ""
	case r.SpillPath == "":
		return "[output truncated; full output: (unavailable)]"
	case r.SpillBytes < r.Bytes:
		return fmt.Sprintf("[output truncated; the first %d of %d bytes are in: %s]", r.SpillBytes, r.Bytes, r.SpillPath)
	}
	return "[output truncated; full output: " + r.SpillPath + "]"
}
