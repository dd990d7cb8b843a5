package acp

import (
	"errors"
	"strings"
	"testing"
)

// TestHistoryPointCheck: the forms `_session/rewind` refuses with -32602,
// as the AIR extension's adapters do.
func TestHistoryPointCheck(t *testing.T) {
	fp := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		name string
		p    *HistoryPoint
		ok   bool
	}{
		{"an id", &HistoryPoint{MessageID: "user-3"}, true},
		{"an id, its fingerprint and occurrence", &HistoryPoint{MessageID: "u", Fingerprint: fp, Occurrence: 2}, true},
		{"missing", nil, false},
		{"an empty id", &HistoryPoint{Fingerprint: fp}, false},
		{"a fingerprint in upper case", &HistoryPoint{MessageID: "u", Fingerprint: strings.ToUpper(fp)}, false},
		{"a fingerprint of another hash", &HistoryPoint{MessageID: "u", Fingerprint: "md5:" + strings.Repeat("a", 32)}, false},
		{"a negative occurrence", &HistoryPoint{MessageID: "u", Fingerprint: fp, Occurrence: -1}, false},
	}
	for _, tt := range tests {
		err := tt.p.Check("beforeMessage")
		var ae *Error
		if tt.ok != (err == nil) || err != nil && (!errors.As(err, &ae) || ae.Code != CodeInvalidParams) {
			t.Errorf("%s: %v, want ok %v (else -32602)", tt.name, err, tt.ok)
		}
	}
}

// TestForkPoint: session/fork's _meta.jetbrains.air.fork, read and checked.
func TestForkPoint(t *testing.T) {
	air := func(fork any) Meta { return Meta{"jetbrains": map[string]any{"air": map[string]any{"fork": fork}}} }
	if p, err := ForkPoint(Meta{"other": 1}); p != nil || err != nil {
		t.Errorf("no fork point: %+v, %v", p, err)
	}
	p, err := ForkPoint(air(map[string]any{"version": float64(1), "messageId": "agent-7", "messageOccurrence": float64(2)}))
	if err != nil || p.MessageID != "agent-7" || p.Occurrence != 2 {
		t.Errorf("a fork point: %+v, %v", p, err)
	}
	for _, bad := range []any{map[string]any{"version": float64(1)}, map[string]any{"messageId": "m", "messageOccurrence": 1.5}} {
		if _, err := ForkPoint(air(bad)); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
