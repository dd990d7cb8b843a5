package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RefusedError is a connection the guard would not make.
type RefusedError struct {
	Host string // the host asked for, as the URL names it
	Addr string // the address refused ("" when the port alone was)
	Why  string
}

func (e *RefusedError) Error() string {
	switch {
	case e.Addr == "":
		return fmt.Sprintf("%s: %s", e.Host, e.Why)
	case e.Host == e.Addr || e.Host == "":
		return fmt.Sprintf("%s is %s", e.Addr, e.Why)
	}
	return fmt.Sprintf("%s resolves to %s, %s", e.Host, e.Addr, e.Why)
}

// Options configure a Guard; the zero value is what the bridge uses.
type Options struct {
	// Resolve looks up a host's addresses. Nil: the system resolver. Tests
	// give one that answers differently each time (DNS rebinding).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Proxy chooses a request's proxy. Nil: the environment's
	// (http.ProxyFromEnvironment: HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
	Proxy func(*http.Request) (*url.URL, error)
	// TLS is the client's TLS configuration (tests trust a test server's
	// certificate). Nil: the system's roots.
	TLS *tls.Config
	// DialTimeout bounds one connection attempt. Zero: 10 s.
	DialTimeout time.Duration
	// Dial connects to an address the guard has checked ("ip:port"). Nil:
	// a net.Dialer whose Control checks the socket's address once more.
	// Tests put a server of theirs behind a public address and port 443.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Guard dials for one chain of requests (a fetch and its redirects). Open
// says which hosts the user's own rule names: those may be reached at any
// address and port. Make one per chain: a connection the transport pools is
// not checked again, so it must never serve a request another chain makes
// under other rules.
type Guard struct {
	o    Options
	open func(host string) bool

	mu sync.Mutex
	// proxyTo is the host:port of the proxy the chain's latest request
	// chose ("" when it goes direct). The requests of a chain (a fetch,
	// its redirects) are made one after another, and the transport asks
	// Proxy before it dials for each, so a direct request to the proxy's
	// own address is not mistaken for the proxy.
	proxyTo string
}

// New makes a guard; open may be nil (no host is open).
func New(o Options, open func(host string) bool) *Guard {
	if open == nil {
		open = func(string) bool { return false }
	}
	return &Guard{o: o, open: open}
}

func (g *Guard) dialTimeout() time.Duration {
	if g.o.DialTimeout > 0 {
		return g.o.DialTimeout
	}
	return 10 * time.Second
}

func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if g.o.Resolve != nil {
		return g.o.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// Transport is an HTTP transport whose every connection this guard makes.
// HTTP/2 stays on; responses are decompressed by the transport, so a body
// cap counts decoded bytes (a gzip bomb is bounded by it).
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                  g.proxy,
		DialContext:            g.DialContext,
		TLSClientConfig:        g.o.TLS,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  20 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		IdleConnTimeout:        30 * time.Second,
	}
}

// proxy is the environment's choice for req. A proxied request's target is
// checked here, on the guard's own resolution (see the package doc), and
// the proxy is remembered so that DialContext reaches it for this request.
func (g *Guard) proxy(req *http.Request) (*url.URL, error) {
	choose := g.o.Proxy
	if choose == nil {
		choose = http.ProxyFromEnvironment
	}
	u, err := choose(req)
	g.mu.Lock()
	g.proxyTo = ""
	g.mu.Unlock()
	if err != nil || u == nil {
		return u, err
	}
	port := req.URL.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[req.URL.Scheme]
	}
	if err := g.Check(req.Context(), req.URL.Hostname(), port); err != nil {
		if _, ok := Refused(err); ok {
			return nil, err
		}
		// A name that does not resolve here cannot be checked: refused
		// rather than left to the proxy, which may reach the inside.
		return nil, fmt.Errorf("%s cannot be checked before the proxy connects to it: %w", req.URL.Hostname(), err)
	}
	g.mu.Lock()
	g.proxyTo = proxyAddr(u)
	g.mu.Unlock()
	return u, nil
}

// proxyAddr is the host:port the transport dials for a proxy URL.
func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Check resolves host and refuses it unless every address it has may be
// reached on port (what a proxy will connect to, or an early answer).
func (g *Guard) Check(ctx context.Context, host, port string) error {
	p, err := parsePort(host, port)
	if err != nil {
		return err
	}
	if why := HostRefusal(host); why != "" {
		return &RefusedError{Host: host, Why: why}
	}
	if g.open(host) {
		return nil
	}
	if !Port(uint16(p)) {
		return portRefused(host, p)
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if why := Refusal(a); why != "" {
			return &RefusedError{Host: host, Addr: a.String(), Why: why}
		}
	}
	return nil
}

// parsePort reads a port number, refusing what is not one.
func parsePort(host, port string) (uint64, error) {
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0, &RefusedError{Host: host, Why: fmt.Sprintf("port %q is not a port number", port)}
	}
	return p, nil
}

func portRefused(host string, p uint64) error {
	return &RefusedError{Host: host, Why: fmt.Sprintf("port %d is neither 80 nor 443", p)}
}

// DialContext connects to addr ("host:port") as the transport asks: the
// proxy the chain's current request chose as it is; anything else at a resolved address
// that Refusal accepts (all of them for an open host), on port 80 or 443
// (any for an open host). The check runs again in the dialer's Control, on
// the address the socket connects to.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	proxied := g.proxyTo != "" && g.proxyTo == strings.ToLower(addr)
	g.mu.Unlock()
	d := &net.Dialer{Timeout: g.dialTimeout()}
	if proxied {
		return d.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	p, err := parsePort(host, port)
	if err != nil {
		return nil, err
	}
	if why := HostRefusal(host); why != "" {
		return nil, &RefusedError{Host: host, Why: why}
	}
	open := g.open(host)
	if !open && !Port(uint16(p)) {
		return nil, portRefused(host, p)
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	d.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &RefusedError{Host: host, Addr: address, Why: "not an IP address and port"}
		}
		if open {
			return nil
		}
		if why := Refusal(ap.Addr()); why != "" {
			return &RefusedError{Host: host, Addr: ap.Addr().String(), Why: why}
		}
		if !Port(ap.Port()) {
			return portRefused(host, uint64(ap.Port()))
		}
		return nil
	}
	var refused, failed error
	for _, a := range addrs {
		if !open {
			if why := Refusal(a); why != "" {
				if refused == nil {
					refused = &RefusedError{Host: host, Addr: a.Unmap().String(), Why: why}
				}
				continue
			}
		}
		dial := d.DialContext
		if g.o.Dial != nil {
			dial = g.o.Dial
		}
		conn, err := dial(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(p)).String())
		if err == nil {
			return conn, nil
		}
		if failed == nil {
			failed = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case failed != nil:
		return nil, failed
	case refused != nil:
		return nil, refused
	}
	return nil, fmt.Errorf("%s has no address", host)
}

// Refused finds the guard's refusal in err's chain.
func Refused(err error) (*RefusedError, bool) {
	var r *RefusedError
	ok := errors.As(err, &r)
	return r, ok
}
