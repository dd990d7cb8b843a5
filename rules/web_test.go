package rules

import (
	"encoding/json"
	"testing"
)

func TestDomain(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://Docs.Python.org./3/", "docs.python.org"},
		{"http://127.0.0.1:8080/x", "127.0.0.1"},
		{"http://[::1]:80/", "::1"},
		{"http://[::FFFF:7f00:1]/", "::ffff:127.0.0.1"},
		{"https://bücher.example/", "xn--bcher-kva.example"},
		{"https://user:pw@example.com/", "example.com"},
		{"file:///etc/passwd", ""},
		{"not a url", ""},
		{"", ""},
	} {
		if got := Domain(tc.url); got != tc.want {
			t.Errorf("Domain(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestWebRulesParse(t *testing.T) {
	for _, bad := range []string{"WebFetch(docs.python.org)", "WebFetch(domain:*)", "WebFetch(domain:a.*.com)",
		"WebFetch(domain:https://x.com)", "WebFetch(domain:x.com/path)", "WebFetch(domain:x.com:8080)", "WebSearch(domain:x.com)"} {
		if _, err := Parse(Allow, bad, Source{}); err == nil {
			t.Errorf("Parse(%q) = nil error", bad)
		}
	}
	for _, good := range []string{"WebFetch", "web_fetch", "WebFetch(domain:docs.python.org)", "WebFetch(domain:*.python.org)",
		"WebFetch(domain:127.0.0.1)", "WebFetch(domain:::1)", "WebSearch", "webfetch(domain:Bücher.example)"} {
		if _, err := Parse(Allow, good, Source{}); err != nil {
			t.Errorf("Parse(%q): %v", good, err)
		}
	}
}

func TestDecideWeb(t *testing.T) {
	s := set(t, "/w",
		[2]string{"allow", "WebFetch(domain:python.org)"},
		[2]string{"allow", "WebFetch(domain:*.go.dev)"},
		[2]string{"allow", "WebFetch(domain:127.0.0.1)"},
		[2]string{"allow", "webfetch(domain:bücher.example)"},
		[2]string{"deny", "WebFetch(domain:evil.example)"},
		[2]string{"ask", "web_fetch(domain:ask.example)"},
		[2]string{"deny", "WebSearch"},
	)
	for _, tc := range []struct{ tool, url, want string }{
		{"web_fetch", "https://python.org/", "WebFetch(domain:python.org)"},
		{"web_fetch", "https://docs.python.org/3/", "WebFetch(domain:python.org)"},
		{"web_fetch", "https://notpython.org/", ""},
		{"web_fetch", "https://go.dev/", ""},
		{"web_fetch", "https://pkg.go.dev/", "WebFetch(domain:*.go.dev)"},
		{"web_fetch", "http://127.0.0.1:4567/", "WebFetch(domain:127.0.0.1)"},
		{"web_fetch", "http://127.0.0.10/", ""},
		{"web_fetch", "https://xn--bcher-kva.example/", "webfetch(domain:bücher.example)"},
		{"web_fetch", "https://EVIL.example./x", "WebFetch(domain:evil.example)"},
		{"web_fetch", "https://www.evil.example/", "WebFetch(domain:evil.example)"},
		{"web_fetch", "https://ask.example/", "web_fetch(domain:ask.example)"},
		{"web_search", "", "WebSearch"},
		{"read", "https://python.org/", ""},
	} {
		args, _ := json.Marshal(map[string]string{"url": tc.url})
		r, ok := s.DecideCall(tc.tool, args, "/w")
		got := ""
		if ok {
			got = r.Text
		}
		if got != tc.want {
			t.Errorf("%s %s: decided by %q, want %q", tc.tool, tc.url, got, tc.want)
		}
	}
	// A rule that names the domain is specific; the whole tool is not.
	whole := set(t, "/w", [2]string{"allow", "WebFetch"})
	r, ok := whole.DecideCall("web_fetch", json.RawMessage(`{"url":"http://127.0.0.1/"}`), "/w")
	if !ok || r.Specific() {
		t.Errorf("WebFetch without a pattern: ok %v, specific %v; want a match that names no domain", ok, r.Specific())
	}
}

// Check opens a web host (written) only under an allow rule the user wrote
// that names the host itself: not a parent domain, a wildcard, the whole
// tool or an "always" answer.
func TestCheckOpensOnlyTheHostNamed(t *testing.T) {
	s := set(t, "/w",
		[2]string{"allow", "WebFetch(domain:nip.io)"},
		[2]string{"allow", "WebFetch(domain:*.corp.example)"},
		[2]string{"allow", "WebFetch(domain:127.0.0.1)"},
		[2]string{"allow", "WebFetch(domain:wiki.corp.example)"},
		[2]string{"deny", "WebFetch(domain:bad.corp.example)"},
	)
	remembered, err := Parse(Allow, "WebFetch(domain:lan.example)", Source{Kind: "remembered"})
	if err != nil {
		t.Fatal(err)
	}
	s = append(s, remembered)
	for _, tc := range []struct {
		url     string
		effect  Effect
		written bool
	}{
		{"http://127.0.0.1:8080/", Allow, true},
		{"http://wiki.corp.example/", Allow, true},
		{"http://nip.io/", Allow, true},
		{"http://127.0.0.1.nip.io/", Allow, false},      // a parent domain's rule
		{"http://build.corp.example/", Allow, false},    // a wildcard
		{"http://bad.corp.example/", Deny, false},       // denied, whatever else names it
		{"http://lan.example/", Allow, false},           // an "always" answer
		{"http://elsewhere.example/", "", false},        // no rule
		{"http://WIKI.corp.example./x", Allow, true},    // the host as rules read it
		{"http://www.wiki.corp.example/", Allow, false}, // under the host named
	} {
		args, _ := json.Marshal(map[string]string{"url": tc.url})
		r, written, ok := s.Check("web_fetch", args, "/w")
		if r.Effect != tc.effect || written != tc.written || ok != (tc.effect != "") {
			t.Errorf("%s: %q written %v (ok %v), want %q written %v", tc.url, r.Effect, written, ok, tc.effect, tc.written)
		}
	}
	// Other tools keep what written meant: a pattern the user wrote.
	files := set(t, "/w", [2]string{"allow", "Read(/w/**)"}, [2]string{"allow", "Bash"})
	if _, written, _ := files.Check("read", json.RawMessage(`{"file_path":"/w/a"}`), "/w"); !written {
		t.Errorf("Read(/w/**) for /w/a: not written")
	}
	if _, written, _ := files.Check("bash", json.RawMessage(`{"command":"ls"}`), "/w"); written {
		t.Errorf("Bash for ls: written")
	}
}
