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

func TestHostRefusal(t *testing.T) {
	for _, tc := range []struct {
		host    string
		refused bool
	}{
		{"2130706433", true}, // 127.0.0.1 as one decimal number
		{"0x7f000001", true}, // as one hex number
		{"0X7F000001", true},
		{"0177.0.0.1", true}, // octal first part
		{"127.1", true},      // fewer than four parts
		{"127.0.1", true},
		{"0", true},          // 0.0.0.0
		{"0x", true},         // 0 to the URL standard
		{"127.0.0.1.", true}, // a trailing dot: not netip's form
		{"1.2.3.4.5", true},  // ends in a number, not an address
		{"example.123", true},
		{"127.0.0.1", false},
		{"8.8.8.8", false},
		{"::1", false}, // an IPv6 literal is judged by its address
		{"fe80::1%eth0", false},
		{"example.com", false},
		{"example.com.", false},
		{"1.example", false},
		{"0x.example", false},
		{"123abc", false},
		{"localhost", false},
	} {
		if got := HostRefusal(tc.host); (got != "") != tc.refused {
			t.Errorf("HostRefusal(%q) = %q, want refused=%v", tc.host, got, tc.refused)
		}
	}
}

// TestShorthandNeverReachesAProxy: a proxy (or a C resolver) reads
// 2130706433 as 127.0.0.1, while Go's resolver, or a resolver that answers
// every name, says something else: the form is refused before any
// resolution, direct or through a proxy.
func TestShorthandNeverReachesAProxy(t *testing.T) {
	var seen atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	// Were a form let through, the direct connection goes to this server,
	// never to the network.
	direct, directHits := server(t)
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, direct.Listener.Addr().String())
	}
	var resolved atomic.Int32
	public := func(context.Context, string) ([]netip.Addr, error) {
		resolved.Add(1)
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	for _, proxied := range []bool{true, false} {
		o := Options{Resolve: public, Dial: dial, Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}
		if proxied {
			o.Proxy = http.ProxyURL(pu)
		}
		g := New(o, nil)
		for _, u := range []string{"http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://127.1/", "http://0/", "https://127.0.0.1./"} {
			err := get(t, g, u)
			if r, ok := Refused(err); !ok || !strings.Contains(r.Why, "shorthand") {
				t.Errorf("%s (proxy %v): %v, want refused as a shorthand", u, proxied, err)
			}
		}
	}
	if seen.Load() != 0 || directHits.Load() != 0 || resolved.Load() != 0 {
		t.Errorf("the proxy saw %d requests, the direct server %d, the resolver %d names; want none", seen.Load(), directHits.Load(), resolved.Load())
	}
}
