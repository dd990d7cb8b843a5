package model

import (
	"strings"
	"testing"
)

func TestCacheHitSniffer(t *testing.T) {
	usage := `data: {"choices":[],"usage":{"prompt_tokens":10,"prompt_cache_hit_tokens":7}}` + "\n\n"
	tests := []struct {
		name   string
		stream string
		split  int
		want   int
	}{
		{"whole", usage, 0, 7},
		{"byte by byte", usage, 1, 7},
		{"CRLF lines", strings.ReplaceAll(usage, "\n", "\r\n"), 3, 7},
		{"the key in content is not usage", `data: {"choices":[{"delta":{"content":"\"prompt_cache_hit_tokens\": 5"}}]}` + "\n", 0, -1},
		{"the last one wins", strings.Replace(usage, "7", "1", 1) + usage, 4, 7},
		{"an overlong line before it", "data: " + strings.Repeat("x", maxSniffLine+10) + "\n" + usage, 100, 7},
		{"an overlong usage line is skipped", "data: {" + strings.Repeat(" ", maxSniffLine) + `"usage":{"prompt_cache_hit_tokens":3}}` + "\n", 0, -1},
		{"no newline yet", strings.TrimSpace(usage), 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newCacheHitSniffer()
			b := []byte(tt.stream)
			for len(b) > 0 {
				k := len(b)
				if tt.split > 0 {
					k = min(tt.split, len(b))
				}
				s.feed(b[:k])
				b = b[k:]
			}
			if s.hit != tt.want {
				t.Fatalf("hit = %d, want %d", s.hit, tt.want)
			}
		})
	}
}
