package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http/httpproxy"

	"github.com/acp-bridge/acp-bridge/internal/netguard"
)

// names is a resolver for the tests: the names it knows, in lower case
// (a trailing dot ignored); nothing else resolves.
func names(m map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := m[strings.TrimSuffix(strings.ToLower(host), ".")]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
}

// TestFetchRedirectAttacks: a site the user's rule opens
// (WebFetch(domain:127.0.0.1)) redirects to every form of an address the
// rule does not open. Each is refused before any request; the trap, a
// loopback server each URL aims at where it can, sees none.
func TestFetchRedirectAttacks(t *testing.T) {
	trap := newSite(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "trapped") })
	tu, _ := url.Parse(trap.URL)
	q := tu.Port()
	o := &Options{Guard: noProxy.Guard}
	o.Guard.Resolve = names(map[string]string{"localhost": "127.0.0.1", "inside.example": "10.0.0.5", "meta.example": "169.254.169.254"})
	var to atomic.Value
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			w.Header().Set("Location", to.Load().(string))
			w.WriteHeader(http.StatusFound)
			return
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/")); err == nil {
			if n > 0 {
				http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
				return
			}
			io.WriteString(w, "arrived")
		}
	})
	// Every connection the guard lets through goes to a test server: the
	// site on its own port, the trap for any other address, so an attack
	// that got through is counted, and nothing reaches the network.
	su, _ := url.Parse(s.URL)
	o.Guard.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		to := trap.Listener.Addr().String()
		if strings.HasSuffix(addr, ":"+su.Port()) {
			to = s.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, to)
	}
	for _, tc := range []struct {
		name, location string
		want           string // in the refusal; "" for a redirect followed
		code           string // default CodeRefused
	}{
		// The rule names a host, not a port: the same host on another
		// port is the host the user opened (README, "The web").
		{"same host, another port", "http://127.0.0.1:" + q + "/", "", ""},
		{"mapped metadata", "http://[::ffff:169.254.169.254]/", "cloud metadata", ""},
		{"mapped loopback", "http://[::ffff:127.0.0.1]:" + q + "/", "loopback", ""},
		{"v6 loopback", "http://[::1]:" + q + "/", "loopback", ""},
		{"decimal", "http://2130706433:" + q + "/", "shorthand", ""},
		{"hex", "http://0x7f000001:" + q + "/", "shorthand", ""},
		{"octal", "http://0177.0.0.1:" + q + "/", "shorthand", ""},
		{"two parts", "http://127.1:" + q + "/", "shorthand", ""},
		{"zero", "http://0:" + q + "/", "shorthand", ""},
		{"trailing dot on an address", "http://127.0.0.1.:" + q + "/", "shorthand", ""},
		{"fullwidth digits", "http://%EF%BC%92%EF%BC%91%EF%BC%93%EF%BC%90%EF%BC%97%EF%BC%90%EF%BC%96%EF%BC%94%EF%BC%93%EF%BC%93:" + q + "/", "shorthand", ""},
		{"unspecified v6", "http://[::]:" + q + "/", "unspecified", ""},
		{"zoned link-local", "http://[fe80::1%25eth0]/", "zoned", ""},
		{"ULA", "http://[fd00::1]/", "private", ""},
		{"NAT64 of metadata", "http://[64:ff9b::a9fe:a9fe]/", "NAT64 address of 169.254.169.254", ""},
		{"6to4 of metadata", "http://[2002:a9fe:a9fe::]/", "6to4", ""},
		{"localhost with a trailing dot", "http://localhost./", "loopback", ""},
		{"mixed case", "http://LocalHost/", "loopback", ""},
		{"percent-encoded ASCII host", "http://%6c%6fcalhost/", "invalid URL escape", CodeFetchFailed},
		{"backslash userinfo", `http://evil.example\@127.0.0.1:` + q + "/", "invalid userinfo", CodeFetchFailed},
		{"user only", "http://user@127.0.0.1:" + q + "/", "credentials", ""},
		{"user and password", "http://u:p@127.0.0.1:" + q + "/", "credentials", ""},
		{"a name of a private address", "http://inside.example/", "inside.example resolves to 10.0.0.5", ""},
		{"a name of the metadata service", "http://meta.example/", "cloud metadata", ""},
		{"file", "file:///etc/passwd", "not file:", ""},
		{"gopher", "gopher://127.0.0.1:" + q + "/_GET%20/", "not gopher:", ""},
		{"data", "data:text/html,<h1>x</h1>", "not data:", ""},
		{"loop", "/go", "stopped after 10 redirects", ""},
		{"over the limit", "/hop/9", "stopped after 10 redirects", ""}, // /go and 10 hops
		{"at the limit", "/hop/8", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to.Store(tc.location)
			before := trap.hits.Load()
			// WebFetch alone allows every host without opening it: a
			// redirect to another host is followed, and checked.
			p, err := run(t, o, ruleCall(t, allowLocal, [2]string{"allow", "WebFetch"}), fetchArgs{URL: s.URL + "/go"})
			reached := trap.hits.Load() - before
			if tc.want == "" {
				if err != nil || (p.Content != "trapped\n" && p.Content != "arrived\n") {
					t.Errorf("followed: %+v, %v", p, err)
				}
				return
			}
			want := tc.code
			if want == "" {
				want = CodeRefused
			}
			if err == nil || code(err) != want || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("redirect to %s: %+v, %v (%s); want %s with %q", tc.location, p, err, code(err), want, tc.want)
			}
			if reached != 0 {
				t.Errorf("redirect to %s reached the trap %d times", tc.location, reached)
			}
		})
	}
}

// TestFetchRebinding: a name that resolves to a public address first and
// to 127.0.0.1 next. The second request of the chain needs a new
// connection (the first answered Connection: close): it is made to the
// address resolved for it, which is refused.
func TestFetchRebinding(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Connection", "close")
			http.Redirect(w, r, "/second", http.StatusFound)
			return
		}
		io.WriteString(w, "secret")
	})
	var calls atomic.Int32
	o := &Options{Guard: noProxy.Guard}
	o.Guard.Resolve = func(context.Context, string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	// Whatever address the guard lets through reaches the test site.
	o.Guard.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, s.Listener.Addr().String())
	}
	_, err := run(t, o, ruleCall(t), fetchArgs{URL: "http://rebind.example:80/"})
	if code(err) != CodeRefused || !strings.Contains(err.Error(), "rebind.example resolves to 127.0.0.1, a loopback address") {
		t.Errorf("the rebound second request: %v (%s), want refused", err, code(err))
	}
	if n := s.hits.Load(); n != 1 || calls.Load() != 2 {
		t.Errorf("the site saw %d requests (want 1, the public one), the resolver %d lookups (want 2)", n, calls.Load())
	}
}

// TestFetchThroughProxy: with HTTP(S)_PROXY and NO_PROXY as the
// environment gives them (httpproxy is what http.ProxyFromEnvironment
// reads them with), the proxy is no way around the address check: a
// target is resolved and checked before the proxy is asked for it, and a
// NO_PROXY target goes direct, through the guarded dialer.
func TestFetchThroughProxy(t *testing.T) {
	proxy := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/to-inside" {
			http.Redirect(w, r, "http://inside.example:80/", http.StatusFound)
			return
		}
		io.WriteString(w, "via proxy to "+r.URL.Host)
	})
	direct := newSite(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "direct") })
	env := httpproxy.Config{HTTPProxy: proxy.URL, HTTPSProxy: proxy.URL, NoProxy: "near.example,near-inside.example"}
	choose := env.ProxyFunc()
	o := &Options{Guard: netguard.Options{
		Proxy: func(r *http.Request) (*url.URL, error) { return choose(r.URL) },
		Resolve: names(map[string]string{"public.example": "93.184.216.34", "inside.example": "192.168.0.10",
			"near.example": "93.184.216.35", "near-inside.example": "10.0.0.9"}),
	}}
	// A direct connection the guard lets through reaches the direct site;
	// the proxy is dialed as it is (the user's configuration).
	pu, _ := url.Parse(proxy.URL)
	o.Guard.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, direct.Listener.Addr().String())
	}
	for _, tc := range []struct {
		url, want   string // want: the content, or a word of the error
		proxy, site int32  // requests the proxy and the direct site see
	}{
		{"http://public.example:80/", "via proxy to public.example:80", 1, 0},
		{"http://inside.example:80/", "192.168.0.10, a private address", 0, 0},
		{"http://nodns.example:80/", "cannot be checked before the proxy", 0, 0},
		{"http://public.example:80/to-inside", "192.168.0.10, a private address", 1, 0},
		{"http://near.example:80/", "direct", 0, 1},
		{"http://near-inside.example:80/", "10.0.0.9, a private address", 0, 0},
		{"http://2130706433/", "shorthand", 0, 0},
		{"http://" + pu.Host + "/", "loopback", 0, 0}, // the proxy itself, as a target
	} {
		p0, s0 := proxy.hits.Load(), direct.hits.Load()
		p, err := run(t, o, ruleCall(t, [2]string{"allow", "WebFetch"}), fetchArgs{URL: tc.url})
		got := p.Content
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.url, got, tc.want)
		}
		if dp, ds := proxy.hits.Load()-p0, direct.hits.Load()-s0; dp != tc.proxy || ds != tc.site {
			t.Errorf("%s: the proxy saw %d requests (want %d), the direct site %d (want %d)", tc.url, dp, tc.proxy, ds, tc.site)
		}
	}
}
