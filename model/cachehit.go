package model

import (
	"bytes"
	"encoding/json"
)

// DeepSeek reports its prompt cache as usage.prompt_cache_hit_tokens, a
// field go-openai's Usage does not have (OpenAI's
// prompt_tokens_details.cached_tokens it has). cacheHitSniffer reads it
// off the raw event stream as the body goes by, so the chunk decoding stays
// the library's.
type cacheHitSniffer struct {
	line     []byte
	overflow bool // the current line outgrew maxSniffLine: skip it
	hit      int  // the last value seen, -1 before any
}

// maxSniffLine bounds the line buffer: a usage chunk is a few hundred
// bytes; long content lines are dropped rather than buffered.
const maxSniffLine = 8 << 10

var cacheHitKey = []byte(`"prompt_cache_hit_tokens"`)

func newCacheHitSniffer() *cacheHitSniffer { return &cacheHitSniffer{hit: -1} }

func (s *cacheHitSniffer) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !s.overflow {
			if len(s.line)+len(part) > maxSniffLine {
				s.overflow, s.line = true, s.line[:0]
			} else {
				s.line = append(s.line, part...)
			}
		}
		if i < 0 {
			return
		}
		if !s.overflow {
			s.check(s.line)
		}
		s.line, s.overflow = s.line[:0], false
		p = p[i+1:]
	}
}

func (s *cacheHitSniffer) check(line []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
	if !ok || !bytes.Contains(data, cacheHitKey) {
		return
	}
	var c struct {
		Usage *struct {
			Hit *int `json:"prompt_cache_hit_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &c) == nil && c.Usage != nil && c.Usage.Hit != nil {
		s.hit = *c.Usage.Hit
	}
}
