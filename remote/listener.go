package remote

import (
	"container/list"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Network limits below HTTP: a peer that opens TCP connections and sends
// nothing (or half a request) holds a descriptor each. The server keeps at
// most MaxOpen of them: when full, it closes the oldest connection that
// has not sent a whole request yet (or, if none, the newcomer), and the
// header timeout closes any that stays silent. Descriptors stay bounded
// whatever a peer does, and a client that speaks is not locked out by
// connections that do not.

const (
	defaultMaxOpen    = 1024
	readHeaderTimeout = 10 * time.Second
	keepAliveIdle     = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

// HTTPServer returns the http.Server to run s with (timeouts, HTTP/2 with
// and without TLS, no logging of peers' errors) and l wrapped to keep at
// most maxOpen TCP connections open (default 1024).
func (s *Server) HTTPServer(l net.Listener, maxOpen int) (*http.Server, net.Listener) {
	if maxOpen <= 0 {
		maxOpen = defaultMaxOpen
	}
	lim := &limiter{Listener: l, max: maxOpen, fresh: list.New(), at: map[net.Conn]*list.Element{}}
	s.limiter = lim
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       keepAliveIdle,
		MaxHeaderBytes:    maxHeaderBytes,
		Protocols:         &p,
		ConnState:         lim.state,
		// TLS handshake failures and the like are the peer's doing; one
		// line each would let a peer fill the log.
		ErrorLog: log.New(io.Discard, "", 0),
	}, lim
}

// openConns is how many TCP connections the server holds.
func (s *Server) openConns() int {
	if s.limiter == nil {
		return 0
	}
	return int(s.limiter.open.Load())
}

type limiter struct {
	net.Listener
	max      int
	open     atomic.Int64
	accepted atomic.Int64

	mu    sync.Mutex
	fresh *list.List // connections without a request yet, oldest first
	at    map[net.Conn]*list.Element
}

func (l *limiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.accepted.Add(1)
		if int(l.open.Load()) < l.max {
			l.open.Add(1)
			return &counted{Conn: c, l: l}, nil
		}
		l.mu.Lock()
		oldest := l.fresh.Front()
		if oldest != nil {
			l.fresh.Remove(oldest)
			delete(l.at, oldest.Value.(net.Conn))
		}
		l.mu.Unlock()
		if oldest == nil {
			c.Close()
			continue
		}
		oldest.Value.(net.Conn).Close() // its count goes with its Close
		l.open.Add(1)
		return &counted{Conn: c, l: l}, nil
	}
}

// state follows http.Server's view: a connection is "fresh" from accept
// to its first request, and again while idle between requests.
func (l *limiter) state(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateNew, http.StateIdle:
		if l.at[c] == nil {
			l.at[c] = l.fresh.PushBack(c)
		}
	default:
		if e := l.at[c]; e != nil {
			l.fresh.Remove(e)
			delete(l.at, c)
		}
	}
}

// counted gives its place back once, when closed.
type counted struct {
	net.Conn
	l    *limiter
	once sync.Once
}

func (c *counted) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
