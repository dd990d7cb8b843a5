package netguard

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // a word of the refusal; "" when reached
	}{
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"2606:4700:4700::1111", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"127.0.0.1", "loopback"},
		{"127.8.9.10", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.1.2.3", "private"},
		{"0.0.0.0", "this network"},
		{"::", "unspecified"},
		{"::ffff:0.0.0.0", "this network"},
		{"10.0.0.1", "private"},
		{"172.16.5.4", "private"},
		{"192.168.1.1", "private"},
		{"fd12:3456::1", "private"},
		{"169.254.169.254", "metadata"},
		{"::ffff:169.254.169.254", "metadata"},
		{"fd00:ec2::254", "metadata"},
		{"100.100.100.200", "metadata"},
		{"168.63.129.16", "metadata"},
		{"192.0.0.192", "metadata"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "zoned"},
		{"100.64.0.1", "carrier-grade"},
		{"198.18.0.1", "benchmarking"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"::127.0.0.1", "not a global"},         // IPv4-compatible
		{"64:ff9b::7f00:1", "NAT64"},            // NAT64 of 127.0.0.1
		{"2002:7f00:1::1", "6to4"},              // 6to4 of 127.0.0.1
		{"2001:0:4136:e378::1", "Teredo"},       // Teredo
		{"2001:db8::1", "documentation"},        //
		{"2607:f8b0::5efe:7f00:1", "ISATAP"},    // ISATAP of 127.0.0.1
		{"2607:f8b0::200:5efe:a00:1", "ISATAP"}, //
		{"2607:f8b0:4004:800::200e", ""},        // an ordinary global address
	} {
		got := Refusal(netip.MustParseAddr(tc.addr))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Refusal(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// server counts the requests it sees.
func server(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, "hello")
	}))
	t.Cleanup(s.Close)
	return s, &n
}

func get(t *testing.T, g *Guard, u string) error {
	t.Helper()
	c := &http.Client{Transport: g.Transport()}
	defer c.CloseIdleConnections()
	resp, err := c.Get(u)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

func TestGuardRefusesLoopbackUnlessOpen(t *testing.T) {
	s, n := server(t)
	noProxy := func(*http.Request) (*url.URL, error) { return nil, nil }
	err := get(t, New(Options{Proxy: noProxy}, nil), s.URL)
	if r, ok := Refused(err); !ok || !strings.Contains(r.Error(), "neither 80 nor 443") {
		t.Errorf("a loopback server on another port: %v, want the port refused", err)
	}
	// A resolver that says the name is public, but only the first time:
	// the address connected to is the one checked, so the second answer,
	// 127.0.0.1, is refused (rebinding).
	var calls atomic.Int32
	rebind := func(_ context.Context, host string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	g := New(Options{Proxy: noProxy, Resolve: rebind}, nil)
	if err := g.Check(context.Background(), "rebind.example", "80"); err != nil {
		t.Fatalf("the first answer is public: %v", err)
	}
	err = get(t, g, "http://rebind.example/")
	if r, ok := Refused(err); !ok || !strings.Contains(r.Error(), "127.0.0.1, a loopback address") {
		t.Errorf("rebinding to 127.0.0.1: %v, want refused", err)
	}
	if n.Load() != 0 {
		t.Errorf("the server saw %d requests, want none", n.Load())
	}
	// Open: the user's rule names the host.
	open := New(Options{Proxy: noProxy}, func(h string) bool { return h == "127.0.0.1" })
	if err := get(t, open, s.URL); err != nil {
		t.Errorf("an open host: %v", err)
	}
	if n.Load() != 1 {
		t.Errorf("the server saw %d requests, want 1", n.Load())
	}
}

func TestGuardControlChecksTheConnectAddress(t *testing.T) {
	// A name resolving to several addresses: the refused ones are skipped,
	// and when none is left the refusal names the first.
	resolve := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1"), netip.MustParseAddr("10.0.0.1")}, nil
	}
	g := New(Options{Resolve: resolve}, nil)
	_, err := g.DialContext(context.Background(), "tcp", "many.example:443")
	if r, ok := Refused(err); !ok || r.Addr != "127.0.0.1" {
		t.Errorf("DialContext = %v, want 127.0.0.1 refused", err)
	}
}

func TestGuardWithProxy(t *testing.T) {
	// The proxy is a local server: it is dialed whatever its address. The
	// target is checked on the guard's own resolution before the request.
	var seen atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "inside.example":
			return []netip.Addr{netip.MustParseAddr("192.168.0.10")}, nil
		case "nodns.example":
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	g := New(Options{Resolve: resolve, Proxy: http.ProxyURL(pu)}, nil)
	if err := get(t, g, "http://public.example/"); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	for _, u := range []string{"http://inside.example/", "http://169.254.169.254/latest/meta-data/", "http://public.example:8080/"} {
		if _, ok := Refused(get(t, g, u)); !ok {
			t.Errorf("%s through the proxy was not refused", u)
		}
	}
	// A name that does not resolve here cannot be checked: not left to
	// the proxy.
	if err := get(t, g, "http://nodns.example/"); err == nil || !strings.Contains(err.Error(), "cannot be checked before the proxy") {
		t.Errorf("an unresolvable name through the proxy: %v", err)
	}
	// The proxy's own address as a target (a chain that went through the
	// proxy, then a request the environment sends direct, as it does
	// loopback): guarded like any other.
	direct := func(r *http.Request) (*url.URL, error) {
		if r.URL.Hostname() == "127.0.0.1" {
			return nil, nil
		}
		return pu, nil
	}
	g2 := New(Options{Resolve: resolve, Proxy: direct}, nil)
	c := &http.Client{Transport: g2.Transport()}
	defer c.CloseIdleConnections()
	if resp, err := c.Get("http://public.example/"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if _, err := c.Get(proxy.URL + "/admin"); err == nil {
		t.Error("the proxy's own address was reached directly")
	}
	if seen.Load() != 2 {
		t.Errorf("the proxy saw %d requests, want 2", seen.Load())
	}
}

func TestDialRefusesPortBeforeResolving(t *testing.T) {
	g := New(Options{Resolve: func(context.Context, string) ([]netip.Addr, error) {
		t.Error("resolved a host whose port is refused")
		return nil, nil
	}}, nil)
	if _, err := g.DialContext(context.Background(), "tcp", net.JoinHostPort("x.example", "22")); err == nil {
		t.Error("port 22 was dialed")
	}
}
