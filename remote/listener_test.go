package remote

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLimiterEvictsSilent: at its cap, the server closes the oldest
// connection that has not sent a request for each new one, so silent
// connections cannot lock out a client that speaks (the flood through the
// binary is cmd/acp-bridge's TestServeHalfOpenFlood).
func TestLimiterEvictsSilent(t *testing.T) {
	const capacity = 3
	s, err := New(Options{NewAgent: newAgents().factory, Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewUnstartedServer(nil)
	hs.Config, hs.Listener = s.HTTPServer(hs.Listener, capacity)
	hs.Start()
	defer hs.Close()
	silent := make([]net.Conn, capacity)
	for i := range silent {
		c, err := net.Dial("tcp", hs.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent[i] = c
		waitFor(t, "the connection to be accepted", func() bool { return s.limiter.accepted.Load() == int64(i+1) })
	}
	// A client that speaks takes the oldest silent one's place.
	resp, err := http.Get(hs.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health at the cap: %d", resp.StatusCode)
	}
	silent[0].SetReadDeadline(time.Now().Add(never))
	if _, err := silent[0].Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the oldest silent connection: %v, want it closed", err)
	}
	if n := s.openConns(); n > capacity {
		t.Errorf("%d connections held, cap %d", n, capacity)
	}
}
