package registry

import (
	"testing"
	"time"
)

func TestStoppedAfter(t *testing.T) {
	tests := []struct {
		d     time.Duration
		where string
		want  string
	}{
		{time.Second, "timeouts.bash in /c.yaml", "stopped after 1s: timeouts.bash in /c.yaml"},
		{700 * time.Millisecond, "", "stopped after 700ms"},
		{2 * time.Minute, "x", "stopped after 2m: x"},
		{90 * time.Second, "x", "stopped after 1m30s: x"},
		{time.Hour, "x", "stopped after 1h: x"},
		{time.Hour + 30*time.Second, "x", "stopped after 1h0m30s: x"},
	}
	for _, tt := range tests {
		if got := StoppedAfter(tt.d, tt.where); got != tt.want {
			t.Errorf("StoppedAfter(%s, %q) = %q, want %q", tt.d, tt.where, got, tt.want)
		}
	}
}
