package registry

import (
	"strings"
	"time"
)

// StoppedAfter is how a call stopped by a time limit says so: the limit and
// where it was set ("stopped after 1s: timeouts.bash in
// /home/u/.config/acp-bridge/config.yaml"), so the user knows which setting
// to change. The timeout middleware (pipeline.TimeoutBy) and a tool that
// enforces its own limit (tools/bash) say it the same way.
func StoppedAfter(d time.Duration, where string) string {
	s := "stopped after " + ShortDuration(d)
	if where != "" {
		s += ": " + where
	}
	return s
}

// ShortDuration is d as a user writes it in the config file: 1s, 700ms,
// 2m, 1m30s, 1h (not 2m0s or 1h0m0s).
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
