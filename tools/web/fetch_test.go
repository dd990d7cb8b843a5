package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acp-bridge/acp-bridge/internal/netguard"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/rules"
)

// ruleSet answers for a call as the agent's policy does.
type ruleSet rules.Set

func (s ruleSet) CheckRule(tool string, args json.RawMessage) registry.RuleVerdict {
	r, written, ok := rules.Set(s).Check(tool, args, "/")
	if !ok {
		return registry.RuleVerdict{}
	}
	return registry.RuleVerdict{Effect: string(r.Effect), Rule: r.String(), Written: written}
}

func ruleCall(t *testing.T, rs ...[2]string) *registry.Call {
	t.Helper()
	var s rules.Set
	for _, x := range rs {
		r, err := rules.Parse(rules.Effect(x[0]), x[1], rules.Source{Kind: "user", Path: "config.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		s = append(s, r)
	}
	return &registry.Call{Name: "web_fetch", Rules: ruleSet(s), Memo: &registry.Memo{}}
}

// allowLocal is the rule that opens the test servers' host.
var allowLocal = [2]string{"allow", "WebFetch(domain:127.0.0.1)"}

// site is a test server that counts the requests it sees.
type site struct {
	*httptest.Server
	hits atomic.Int32
}

func newSite(t *testing.T, h http.HandlerFunc) *site {
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

var noProxy = &Options{Guard: netguard.Options{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}}

func run(t *testing.T, o *Options, c *registry.Call, in fetchArgs) (Page, error) {
	t.Helper()
	return runFetch(context.Background(), o, c, in)
}

func code(err error) string {
	var re *registry.Error
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

const docsPage = `<!doctype html><html><head><title>Install — Tool docs</title>
<style>body{color:red}</style><script>alert("x")</script></head>
<body><header><a href="/">Home</a> | <a href="/blog">Blog</a></header>
<nav><ul><li><a href="/a">Sidebar A</a></li></ul></nav>
<main><h1>Install</h1><p>Run <code>go install</code>, then read the <a href="guide/start.html">guide</a>.</p>
<pre><code>go install example.com/tool@latest</code></pre>
<table><tr><th>OS</th><th>Path</th></tr><tr><td>linux</td><td>~/go/bin</td></tr></table>
<div hidden>secret hidden text</div><form><input name=q></form></main>
<footer>© Example</footer><script>track()</script></body></html>`

func TestFetchHTMLBecomesMarkdown(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, docsPage)
	})
	c := ruleCall(t, allowLocal)
	p, err := run(t, noProxy, c, fetchArgs{URL: s.URL + "/docs/install.html"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Install", "`go install`", "[guide](" + s.URL + "/docs/guide/start.html)",
		"```\ngo install example.com/tool@latest\n```", "| linux | \\~/go/bin |"} {
		if !strings.Contains(p.Content, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, p.Content)
		}
	}
	for _, not := range []string{"alert", "color:red", "Sidebar", "Blog", "© Example", "secret hidden", "track()"} {
		if strings.Contains(p.Content, not) {
			t.Errorf("the Markdown has %q:\n%s", not, p.Content)
		}
	}
	if p.Title != "Install — Tool docs" || p.Type != "text/html" {
		t.Errorf("title %q type %q", p.Title, p.Type)
	}
	// The same URL again is the session's kept page: no request.
	if _, err := run(t, noProxy, c, fetchArgs{URL: s.URL + "/docs/install.html"}); err != nil {
		t.Fatal(err)
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("two fetches of one URL made %d requests, want 1", n)
	}
	// Another session (another memo) asks again.
	c2 := ruleCall(t, allowLocal)
	if _, err := run(t, noProxy, c2, fetchArgs{URL: s.URL + "/docs/install.html"}); err != nil || s.hits.Load() != 2 {
		t.Errorf("another session: %v, %d requests", err, s.hits.Load())
	}
}

func TestFetchRefusals(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached") })
	u, _ := url.Parse(s.URL)
	port := u.Port()
	// A name the resolver maps to the test server's loopback address: the
	// address is checked, not the name.
	rebind := &Options{Guard: noProxy.Guard}
	rebind.Guard.Resolve = func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	for _, tc := range []struct {
		name, url string
		o         *Options
		rules     [][2]string
		want      string // in the refusal
	}{
		{"loopback without a rule", s.URL, noProxy, nil, "127.0.0.1 is a loopback address"},
		{"loopback, whole-tool allow rule", s.URL, noProxy, [][2]string{{"allow", "WebFetch"}}, "loopback"},
		{"localhost, other port", "http://localhost:" + port + "/", noProxy, nil, "port " + port},
		{"localhost", "http://localhost/", noProxy, nil, "localhost resolves to"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", noProxy, nil, "cloud metadata"},
		{"metadata v6", "http://[fd00:ec2::254]/", noProxy, nil, "cloud metadata"},
		{"mapped loopback", "http://[::ffff:127.0.0.1]:" + port + "/", noProxy, [][2]string{allowLocal}, "loopback"},
		{"rebinding name, 127.0.0.1 allowed", "http://docs.example/", rebind, [][2]string{allowLocal}, "docs.example resolves to 127.0.0.1, a loopback address"},
		{"rebinding name, port 80", "http://docs.example/", rebind, nil, "resolves to 127.0.0.1"},
		// A rule that names a parent domain or a wildcard skips the prompt
		// but opens nothing: whoever runs the domain's DNS (nip.io, a
		// wildcard record) could point a subdomain at the user's network.
		{"subdomain of an allowed domain", "http://private.docs.example/", rebind, [][2]string{{"allow", "WebFetch(domain:docs.example)"}}, "private.docs.example resolves to 127.0.0.1, a loopback address"},
		{"wildcard allow rule", "http://private.docs.example/", rebind, [][2]string{{"allow", "WebFetch(domain:*.docs.example)"}}, "private.docs.example resolves to 127.0.0.1, a loopback address"},
		{"file", "file:///etc/passwd", noProxy, [][2]string{allowLocal}, "not file:"},
		{"ftp", "ftp://127.0.0.1/x", noProxy, [][2]string{allowLocal}, "not ftp:"},
		{"credentials", "http://user:secret@127.0.0.1:" + port + "/", noProxy, [][2]string{allowLocal}, "credentials"},
		{"other port", "http://93.184.216.34:8080/", noProxy, nil, "port 8080"},
		{"deny rule", s.URL, noProxy, [][2]string{allowLocal, {"deny", "WebFetch(domain:127.0.0.1)"}}, "deny rule `WebFetch(domain:127.0.0.1)`"},
		{"no host", "http:///x", noProxy, nil, "names no host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.o, ruleCall(t, tc.rules...), fetchArgs{URL: tc.url})
			if err == nil || !strings.Contains(err.Error(), tc.want) || code(err) != CodeRefused {
				t.Errorf("fetch %s: %v (%s), want refused with %q", tc.url, err, code(err), tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the refusal shows the password: %v", err)
			}
		})
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests, want none", n)
	}
}

// Only an allow rule that names the host itself opens it at a private
// address: the same name, its parent domain's rule refused above, is
// reached under its own.
func TestRuleNamingTheHostOpensIt(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached") })
	u, _ := url.Parse(s.URL)
	o := &Options{Guard: noProxy.Guard}
	o.Guard.Resolve = names(map[string]string{"private.docs.example": "127.0.0.1"})
	c := ruleCall(t, [2]string{"allow", "WebFetch(domain:docs.example)"}, [2]string{"allow", "WebFetch(domain:private.docs.example)"})
	p, err := run(t, o, c, fetchArgs{URL: "http://private.docs.example:" + u.Port() + "/"})
	if err != nil || !strings.Contains(p.Content, "reached") {
		t.Errorf("fetch under a rule naming the host: %q %v", p.Content, err)
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1", n)
	}
}

func TestFetchRedirects(t *testing.T) {
	target := newSite(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "target") })
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/private":
			http.Redirect(w, r, "http://10.1.2.3/admin", http.StatusFound)
		case "/metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/creds":
			http.Redirect(w, r, "http://u:p@127.0.0.1/", http.StatusFound)
		case "/other-host":
			http.Redirect(w, r, "https://example.com/page", http.StatusMovedPermanently)
		case "/same":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/final":
			io.WriteString(w, "final text")
		}
	})
	c := ruleCall(t, allowLocal)
	for _, path := range []string{"/private", "/metadata", "/file", "/creds"} {
		_, err := run(t, noProxy, c, fetchArgs{URL: s.URL + path})
		if code(err) != CodeRefused || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%s: %v, want the redirect refused", path, err)
		}
	}
	p, err := run(t, noProxy, c, fetchArgs{URL: s.URL + "/other-host"})
	if err != nil || p.Redirect != "https://example.com/page" {
		t.Errorf("a redirect to another host: %+v, %v; want it named, not followed", p, err)
	}
	if text := renderPage(fetchArgs{}, p)[0].Text; !strings.Contains(text, "call web_fetch with that URL") {
		t.Errorf("the model reads %q", text)
	}
	p, err = run(t, noProxy, c, fetchArgs{URL: s.URL + "/same"})
	if err != nil || p.URL != s.URL+"/final" || p.Content != "final text\n" {
		t.Errorf("a same-host redirect: %+v, %v", p, err)
	}
	_, err = run(t, noProxy, c, fetchArgs{URL: s.URL + "/loop"})
	if code(err) != CodeRefused || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("a redirect loop: %v", err)
	}
	// Redirects to a deny-ruled host are refused, to an allowed host followed.
	t2, _ := url.Parse(target.URL)
	s2 := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+t2.Port()+"/", http.StatusFound)
	})
	_, err = run(t, noProxy, ruleCall(t, allowLocal, [2]string{"deny", "WebFetch(domain:localhost)"}), fetchArgs{URL: s2.URL})
	if code(err) != CodeRefused || !strings.Contains(err.Error(), "deny rule") {
		t.Errorf("a redirect to a denied host: %v", err)
	}
	p, err = run(t, noProxy, ruleCall(t, allowLocal, [2]string{"allow", "WebFetch(domain:localhost)"}), fetchArgs{URL: s2.URL})
	if err != nil || p.Content != "target\n" {
		t.Errorf("a redirect to an allowed host: %+v, %v", p, err)
	}
	if target.hits.Load() != 1 {
		t.Errorf("the target saw %d requests, want 1", target.hits.Load())
	}
	// The page kept in the session is not served once the rules no
	// longer allow where its redirect led.
	memo := &registry.Memo{}
	allowed := ruleCall(t, allowLocal, [2]string{"allow", "WebFetch(domain:localhost)"})
	allowed.Memo = memo
	if _, err := run(t, noProxy, allowed, fetchArgs{URL: s2.URL}); err != nil {
		t.Fatal(err)
	}
	denied := ruleCall(t, allowLocal, [2]string{"deny", "WebFetch(domain:localhost)"})
	denied.Memo = memo
	if _, err := run(t, noProxy, denied, fetchArgs{URL: s2.URL}); code(err) != CodeRefused {
		t.Errorf("a kept page whose redirect the rules now deny: %v", err)
	}
}

func TestFetchBodyCapAndTypes(t *testing.T) {
	var sent atomic.Int64
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", fmt.Sprint(50<<20))
			line := strings.Repeat("x", 1023) + "\n"
			for i := 0; i < 50<<10; i++ {
				n, err := io.WriteString(w, line)
				sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"a": [1, 2]}`)
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/untyped":
			w.Header()["Content-Type"] = nil
			io.WriteString(w, "<html><body><p>sniffed <b>html</b></p></body></html>")
		case "/404":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "no such page")
		}
	})
	c := ruleCall(t, allowLocal)
	p, err := run(t, noProxy, c, fetchArgs{URL: s.URL + "/big"})
	if err != nil || !strings.Contains(p.Note, "only its first 5.0 MiB were read of 50.0 MiB") {
		t.Errorf("a 50 MB body: %v, note %q", err, p.Note)
	}
	if p.Lines != 5<<10 || p.Next == 0 || len(p.Content) > windowMaxBytes {
		t.Errorf("a 50 MB body: %d lines, next %d, %d bytes shown", p.Lines, p.Next, len(p.Content))
	}
	t.Logf("the server wrote %d bytes before the fetch stopped reading", sent.Load())
	_, err = run(t, noProxy, c, fetchArgs{URL: s.URL + "/png"})
	if code(err) != CodeUnsupportedType || !strings.Contains(err.Error(), "image/png") {
		t.Errorf("an image: %v", err)
	}
	for path, want := range map[string]string{"/json": `{"a": [1, 2]}` + "\n", "/latin1": "café\n", "/untyped": "sniffed **html**\n"} {
		p, err := run(t, noProxy, c, fetchArgs{URL: s.URL + path})
		if err != nil || p.Content != want {
			t.Errorf("%s: %q, %v; want %q", path, p.Content, err, want)
		}
	}
	_, err = run(t, noProxy, c, fetchArgs{URL: s.URL + "/404"})
	if code(err) != CodeHTTPStatus || !strings.Contains(err.Error(), "404 Not Found: no such page") {
		t.Errorf("a 404: %v", err)
	}
}

func TestFetchPaging(t *testing.T) {
	var page strings.Builder
	page.WriteString("<main>")
	for i := range 300 {
		fmt.Fprintf(&page, "<h2>Section %d</h2><p>%s</p>", i, strings.Repeat("word ", 60))
	}
	page.WriteString("</main>")
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page.String())
	})
	c := ruleCall(t, allowLocal)
	p, err := run(t, noProxy, c, fetchArgs{URL: s.URL})
	if err != nil || p.Next == 0 || len(p.Content) > windowMaxBytes || len(p.Outline) == 0 {
		t.Fatalf("a long page: next %d, %d bytes, %d headings, %v", p.Next, len(p.Content), len(p.Outline), err)
	}
	text := renderPage(fetchArgs{}, p)[0].Text
	if !strings.Contains(text, fmt.Sprintf("Use offset=%d to continue.", p.Next)) || !strings.Contains(text, "line 1: ## Section 0") {
		t.Errorf("the model reads no way on:\n%s", text[len(text)-600:])
	}
	seen := p.Content
	for p.Next > 0 {
		if p, err = run(t, noProxy, c, fetchArgs{URL: s.URL, Offset: p.Next}); err != nil {
			t.Fatal(err)
		}
		seen += p.Content
	}
	if !strings.Contains(seen, "## Section 299") || s.hits.Load() != 1 {
		t.Errorf("paging to the end: last section seen %v, %d requests", strings.Contains(seen, "## Section 299"), s.hits.Load())
	}
	if _, err := run(t, noProxy, c, fetchArgs{URL: s.URL, Offset: 1 << 20}); err == nil {
		t.Error("an offset past the end was not refused")
	}
}

func TestFetchPermissionNamesTheDomain(t *testing.T) {
	p := fetchPermission(nil, fetchArgs{URL: "https://Docs.Python.org/3/library/"})
	if p == nil || p.Key != "web_fetch:docs.python.org" || p.Rule != "WebFetch(domain:docs.python.org)" ||
		!strings.Contains(p.Subject, "docs.python.org") || !strings.Contains(p.Reason, "docs.python.org") {
		t.Errorf("permission = %+v", p)
	}
	for _, u := range []string{"file:///etc/passwd", "http://u:p@example.com/", "http://169.254.169.254/", "http://10.0.0.1/", "https://example.com:8443/", "::"} {
		if p := fetchPermission(nil, fetchArgs{URL: u}); p != nil {
			t.Errorf("%s is refused whatever the answer, yet asked about: %+v", u, p)
		}
	}
	if p := fetchPermission(ruleCall(t, allowLocal), fetchArgs{URL: "http://127.0.0.1:8080/"}); p == nil {
		t.Error("a URL on a host a rule opens has no permission request for the rule to answer")
	}
	if _, err := registry.Define(fetchTool(noProxy)); err != nil {
		t.Fatal(err)
	}
	d, _ := registry.Define(fetchTool(noProxy))
	if err := d.Check(); err != nil || !d.Facts.ReadOnly {
		t.Errorf("check %v, facts %+v", err, d.Facts)
	}
}

func TestFetchUpgradesToHTTPS(t *testing.T) {
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "over tls") }))
	defer secure.Close()
	plain := newSite(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "over http") })
	closed := httptest.NewServer(http.NotFoundHandler())
	closedAddr := closed.Listener.Addr().String()
	closed.Close()
	// example.com (the test certificate's name) at a public address; the
	// checked connection goes to the test servers: port 443 to tlsAddr,
	// port 80 to the plain one.
	with := func(tlsAddr string) *Options {
		o := &Options{Guard: noProxy.Guard}
		o.Guard.Resolve = func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		o.Guard.TLS = secure.Client().Transport.(*http.Transport).TLSClientConfig
		o.Guard.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			to := plain.Listener.Addr().String()
			if strings.HasSuffix(addr, ":443") {
				to = tlsAddr
			}
			return (&net.Dialer{}).DialContext(ctx, network, to)
		}
		return o
	}
	p, err := run(t, with(secure.Listener.Addr().String()), ruleCall(t), fetchArgs{URL: "http://example.com/doc"})
	if err != nil || p.URL != "https://example.com/doc" || p.Content != "over tls\n" {
		t.Errorf("a host serving TLS: %+v, %v; want it read over https", p, err)
	}
	p, err = run(t, with(closedAddr), ruleCall(t), fetchArgs{URL: "http://example.com/doc"})
	if err != nil || p.URL != "http://example.com/doc" || p.Content != "over http\n" {
		t.Errorf("a host without TLS: %+v, %v; want it read over http", p, err)
	}
	if plain.hits.Load() != 1 {
		t.Errorf("the plain server saw %d requests, want 1", plain.hits.Load())
	}
}
