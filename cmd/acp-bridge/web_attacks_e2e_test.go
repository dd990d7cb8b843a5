//go:build unix

package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryWebFetchRedirectForms: through the real binary, with a proxy
// in the environment, a local site the rules open redirects to every
// form of an address they do not open (tools/web's TestFetchRedirectAttacks
// in memory). `WebFetch` under allow makes the bridge follow a redirect to
// another host, so each is checked by the dialer rather than handed back
// to the model. None reaches the trap (a loopback server the URLs aim at)
// or the proxy, but the same host on another port, which the rule opens.
func TestBinaryWebFetchRedirectForms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	trap, trapHits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "trapped") })
	proxy, proxyHits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "via proxy") })
	site, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
	})
	tu, _ := url.Parse(trap.URL)
	q := tu.Port()
	cases := []struct{ to, want, not string }{
		{"http://[::ffff:127.0.0.1]:" + q + "/", "loopback", ""},
		{"http://[::ffff:169.254.169.254]/", "cloud metadata", ""},
		{"http://[::1]:" + q + "/", "loopback", ""},
		{"http://2130706433:" + q + "/", "shorthand", ""},
		{"http://0x7f000001:" + q + "/", "shorthand", ""},
		{"http://0177.0.0.1:" + q + "/", "shorthand", ""},
		{"http://127.1:" + q + "/", "shorthand", ""},
		{"http://0:" + q + "/", "shorthand", ""},
		{"http://[::]:" + q + "/", "unspecified", ""},
		{"http://[fe80::1%25eth0]/", "zoned", ""},
		{"http://[fd00::1]/", "private", ""},
		{"http://[64:ff9b::a9fe:a9fe]/", "NAT64", ""},
		{"http://[2002:a9fe:a9fe::]/", "6to4", ""},
		{"http://LOCALHOST/", "loopback", ""},
		{"http://localhost:" + q + "/", "port " + q + " is neither 80 nor 443", ""},
		// Not exempt from the proxy as "localhost" is: checked before the
		// proxy is asked, and Go's resolver does not know it.
		{"http://localhost./", "localhost.", ""},
		{"http://inside.invalid/", "cannot be checked before the proxy", ""},
		// In NO_PROXY: direct, so the dialer's own lookup fails, not the
		// check made for the proxy.
		{"http://near.invalid/", "lookup near.invalid", "proxy"},
		{"http://u@127.0.0.1:" + q + "/", "credentials", ""},
		{"gopher://127.0.0.1:" + q + "/_x", "not gopher:", ""},
		{"file:///etc/passwd", "not file:", ""},
		// The rule names a host, not a port (README, "The web").
		{"http://127.0.0.1:" + q + "/", "trapped", ""},
	}
	var calls [][2]string
	for _, tc := range cases {
		calls = append(calls, [2]string{"web_fetch", fetchArgs(site.URL + "/go?to=" + url.QueryEscape(tc.to))})
	}
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls(calls...), answerText("done"))
	c := policyBridgeEnv(t, m, t.TempDir(), "permissions:\n  allow: [\"WebFetch(domain:127.0.0.1)\", \"WebFetch\"]\n",
		[]string{"HTTP_PROXY=" + proxy.URL, "HTTPS_PROXY=" + proxy.URL, "NO_PROXY=near.invalid"}, "--permission-mode", "bypass")
	c.prompt(c.newSession(t.TempDir()), "fetch them")
	for i, tc := range cases {
		got := toolMessage(m.reqs[1], fmt.Sprintf("call_%d", i+1))
		if !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
			t.Errorf("redirect to %s: the model read %q, want %q (and not %q)", tc.to, got, tc.want, tc.not)
		}
	}
	if n := trapHits.Load(); n != 1 {
		t.Errorf("the trap saw %d requests, want 1 (the open host's other port)", n)
	}
	if n := proxyHits.Load(); n != 0 {
		t.Errorf("the proxy saw %d requests, want none", n)
	}
}

// TestBinaryWebFetchProjectRuleNeedsTrust: a cloned repository's
// .acp-bridge/settings.yaml naming a local host (or the metadata
// service) does not open it until the user trusts those settings; in
// bypass mode too.
func TestBinaryWebFetchProjectRuleNeedsTrust(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	trap, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "inside") })
	home, work := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(work, ".acp-bridge"), 0o755)
	os.WriteFile(filepath.Join(work, ".acp-bridge", "settings.yaml"),
		[]byte("permissions:\n  allow: [\"WebFetch(domain:127.0.0.1)\", \"WebFetch(domain:169.254.169.254)\"]\n"), 0o644)
	run := func(trust string) string {
		m := &oaiMock{t: t}
		m.steps = append(m.steps, toolCalls([2]string{"web_fetch", fetchArgs(trap.URL)}), answerText("ok"))
		c := policyBridge(t, m, home, "", "--permission-mode", "bypass")
		c.answer = func(p map[string]any) string {
			if strings.HasPrefix(fmt.Sprint(p["toolCall"].(map[string]any)["toolCallId"]), "trust-") {
				return trust
			}
			return "allow-once"
		}
		c.prompt(c.newSession(work), "read it")
		return toolMessage(m.reqs[1], "call_1")
	}
	if got := run("do-not-trust"); !strings.Contains(got, "127.0.0.1 is a loopback address") || hits.Load() != 0 {
		t.Errorf("untrusted project rule: the model read %q, the local server saw %d requests; want refused, none", got, hits.Load())
	}
	if got := run("trust"); !strings.Contains(got, "inside") || hits.Load() != 1 {
		t.Errorf("trusted project rule: the model read %q, %d requests; want the page", got, hits.Load())
	}
}
