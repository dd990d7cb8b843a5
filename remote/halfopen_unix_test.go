//go:build unix

package remote

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// TestHalfOpenFlood: 5,000 TCP connections that send half a request and
// wait. The server holds at most its cap of them (the oldest silent one
// goes when a new one comes), so its descriptors and memory stay bounded,
// and a client that speaks is still served.
func TestHalfOpenFlood(t *testing.T) {
	const flood, maxOpen = 5000, 200
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < flood+maxOpen+500 {
		t.Skipf("descriptor limit %d too low for %d connections", lim.Cur, flood)
	}
	h := newAgents()
	s, err := New(Options{NewAgent: h.factory, Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewUnstartedServer(nil)
	hs.Config, hs.Listener = s.HTTPServer(hs.Listener, maxOpen)
	hs.Start()
	defer hs.Close()
	addr := hs.Listener.Addr().String()

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fdsBefore := openFDs()
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", len(conns), err)
		}
		c.Write([]byte("POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le"))
		conns = append(conns, c)
	}
	waitFor(t, "every connection to be accepted", func() bool { return s.limiter.accepted.Load() >= flood })
	if n := s.openConns(); n > maxOpen {
		t.Errorf("the server holds %d connections, cap %d", n, maxOpen)
	}
	// A client that speaks is served: its connection takes a silent one's place.
	resp, err := http.Get(hs.URL + "/health")
	if err != nil {
		t.Fatalf("health during the flood: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health during the flood: %d", resp.StatusCode)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapInuse) - int64(before.HeapInuse)
	fds := openFDs() - fdsBefore
	t.Logf("%d half-open connections: server holds %d, heap +%d KiB (both sides), descriptors +%d (both sides)",
		flood, s.openConns(), grew>>10, fds)
	if fds >= 0 && fds > flood+maxOpen+50 {
		t.Errorf("descriptors grew by %d: the server keeps more than its cap", fds)
	}
	// The client's side alone holds 5,000 connections; a server keeping
	// each would add far more than this.
	if grew > 64<<20 {
		t.Errorf("heap grew by %d MiB", grew>>20)
	}
}

// openFDs counts this process's descriptors, or -1 where /dev/fd cannot
// tell.
func openFDs() int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if es, err := os.ReadDir(dir); err == nil {
			return len(es)
		}
	}
	return -1
}
