//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// The web tools through the real binary (issue 38's "done when"): local
// HTTP servers the tests start, reached only because an allow rule names
// their host, WebFetch(domain:127.0.0.1); every refusal leaves them
// without a request.

// countingServer is a local site that counts the requests it sees.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

func fetchArgs(u string) string {
	b, _ := json.Marshal(map[string]string{"url": u})
	return string(b)
}

// cardTitle is the title a call's card was given.
func (c *rpcClient) cardTitle(id string) string {
	for _, u := range c.updates("tool_call") {
		if u["toolCallId"] == id {
			return fmt.Sprint(u["title"])
		}
	}
	return ""
}

func TestBinaryWebFetchReadsADocsPage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	site, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><head><title>Install</title><script>steal()</script></head><body>
<nav><a href="/">Home</a></nav><main><h1>Installing the tool</h1>
<p>Run <code>make install</code>; see <a href="/docs/config.html">the configuration</a>.</p></main></body></html>`)
	})
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"web_fetch", fetchArgs(site.URL + "/docs/install.html")}), answerText("read it"))
	// Plan mode: web_fetch is read-only, so it runs; the allow rule answers
	// its permission.
	c := policyBridge(t, m, t.TempDir(), allowLocalConfig, "--permission-mode", "plan")
	c.prompt(c.newSession(t.TempDir()), "how do I install it?")
	got := toolMessage(m.reqs[1], "call_1")
	for _, want := range []string{"# Installing the tool", "`make install`", "[the configuration](" + site.URL + "/docs/config.html)", "<title>Install</title>"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model read no %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "steal()") || strings.Contains(got, "Home") {
		t.Errorf("the model read the page's script or navigation:\n%s", got)
	}
	status, card := c.final("call_1")
	if status != "completed" || !strings.Contains(card, "# Installing the tool") {
		t.Errorf("card %s: %s", status, card)
	}
	if title := c.cardTitle("call_1"); title != "Fetch "+site.URL+"/docs/install.html" {
		t.Errorf("card title %q", title)
	}
	if len(c.perms) != 0 || hits.Load() != 1 {
		t.Errorf("%d permission prompts, %d requests; want none and 1", len(c.perms), hits.Load())
	}
}

func TestBinaryWebFetchRefusesTheWayIn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	trap, trapHits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") })
	tu, _ := url.Parse(trap.URL)
	var sent atomic.Int64
	site, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, "http://192.168.1.1/admin", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/", http.StatusFound)
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", fmt.Sprint(50<<20))
			chunk := []byte(strings.Repeat("y", 1023) + "\n")
			for range 50 << 10 {
				n, err := w.Write(chunk)
				sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		}
	})
	cases := []struct{ url, want string }{
		{site.URL + "/to-private", "192.168.1.1 is a private address"},
		{site.URL + "/to-metadata", "cloud metadata"},
		{"http://localhost/", "localhost resolves to"},
		{"http://localhost:" + tu.Port() + "/", "port " + tu.Port() + " is neither 80 nor 443"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254 is the cloud metadata service"},
		{"file:///etc/passwd", "http and https URLs only, not file:"},
		{"http://admin:hunter2@" + tu.Host + "/", "credentials"},
		{site.URL + "/big", "only its first 5.0 MiB were read of 50.0 MiB"},
	}
	var calls [][2]string
	for _, tc := range cases {
		calls = append(calls, [2]string{"web_fetch", fetchArgs(tc.url)})
	}
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls(calls...), answerText("done"))
	c := policyBridge(t, m, t.TempDir(), allowLocalConfig, "--permission-mode", "bypass")
	c.prompt(c.newSession(t.TempDir()), "fetch them")
	for i, tc := range cases {
		id := fmt.Sprintf("call_%d", i+1)
		got := toolMessage(m.reqs[1], id)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: the model read %q, want %q", tc.url, got, tc.want)
		}
		status, _ := c.final(id)
		if wantStatus := map[bool]string{true: "completed", false: "failed"}[strings.HasSuffix(tc.url, "/big")]; status != wantStatus {
			t.Errorf("%s: card %s, want %s", tc.url, status, wantStatus)
		}
		if strings.Contains(got, "hunter2") {
			t.Errorf("the refusal shows the password: %s", got)
		}
	}
	if n := trapHits.Load(); n != 0 {
		t.Errorf("the local server saw %d requests, want none", n)
	}
	t.Logf("the 50 MB server wrote %d bytes before the fetch stopped reading", sent.Load())

	// Without the rule, the same local server is a loopback address like
	// any other, in bypass mode too.
	m2 := &oaiMock{t: t}
	m2.steps = append(m2.steps, toolCalls([2]string{"web_fetch", fetchArgs(trap.URL)}), answerText("done"))
	c2 := policyBridge(t, m2, t.TempDir(), "", "--permission-mode", "bypass")
	c2.prompt(c2.newSession(t.TempDir()), "fetch it")
	if got := toolMessage(m2.reqs[1], "call_1"); !strings.Contains(got, "127.0.0.1 is a loopback address") || !strings.Contains(got, "WebFetch(domain:127.0.0.1)") {
		t.Errorf("without a rule the model read %q", got)
	}
	if n := trapHits.Load(); n != 0 {
		t.Errorf("the local server saw %d requests, want none", n)
	}
}

func TestBinaryWebFetchDenyRuleHoldsInBypass(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	site, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })
	config := "permissions:\n  allow: [\"WebFetch(domain:127.0.0.1)\"]\n  deny: [\"WebFetch(domain:127.0.0.1)\"]\n"
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"web_fetch", fetchArgs(site.URL)}), answerText("done"))
	c := policyBridge(t, m, t.TempDir(), config, "--permission-mode", "bypass")
	c.prompt(c.newSession(t.TempDir()), "fetch")
	status, text := c.final("call_1")
	if status != "failed" || !strings.Contains(text, "deny rule `WebFetch(domain:127.0.0.1)`") {
		t.Errorf("card %s %s, want failed naming the deny rule", status, text)
	}
	if hits.Load() != 0 || len(c.perms) != 0 {
		t.Errorf("%d requests, %d prompts; want none", hits.Load(), len(c.perms))
	}
}

func TestBinaryWebFetchPromptNamesTheDomain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	m := &oaiMock{t: t}
	// The metadata URL is refused whatever the answer: nobody is asked.
	m.steps = append(m.steps, toolCalls([2]string{"web_fetch", fetchArgs("https://Docs.Example.invalid/guide")},
		[2]string{"web_fetch", fetchArgs("http://169.254.169.254/latest/")}), answerText("ok"))
	c := policyBridge(t, m, t.TempDir(), "")
	c.answer = func(map[string]any) string { return "reject-once" }
	c.prompt(c.newSession(t.TempDir()), "read the guide")
	if len(c.perms) != 1 {
		t.Fatalf("%d permission prompts, want 1", len(c.perms))
	}
	if got := toolMessage(m.reqs[1], "call_2"); !strings.Contains(got, "cloud metadata") {
		t.Errorf("the metadata URL: the model read %q", got)
	}
	b, _ := json.Marshal(c.perms[0])
	for _, want := range []string{"Fetch https://Docs.Example.invalid/guide", "Always allow fetches from docs.example.invalid"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the prompt does not say %q: %s", want, b)
		}
	}
}

func TestBinaryWebSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	searx, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" || r.URL.Query().Get("q") != "acp protocol" {
			http.Error(w, "bad request "+r.URL.String(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"query":"acp protocol","results":[
			{"url":"https://agentclientprotocol.com/","title":"Agent Client Protocol","content":"A protocol for <b>editors</b> and agents"},
			{"url":"https://github.com/zed-industries/agent-client-protocol","title":"GitHub repo","content":"The schema"}]}`)
	})
	// Not configured: not offered.
	m := &oaiMock{t: t}
	m.steps = append(m.steps, answerText("hi"))
	c := policyBridge(t, m, t.TempDir(), "")
	c.prompt(c.newSession(t.TempDir()), "hello")
	if names := toolNames(m.reqs[0]); slices.Contains(names, "web_search") || !slices.Contains(names, "web_fetch") {
		t.Errorf("without a search service the model was offered %v", names)
	}

	config := "web:\n  search:\n    searxng: " + searx.URL + "\npermissions:\n  allow: [WebSearch]\n"
	m2 := &oaiMock{t: t}
	m2.steps = append(m2.steps, toolCalls([2]string{"web_search", `{"query":"acp protocol"}`}), answerText("found"))
	c2 := policyBridge(t, m2, t.TempDir(), config)
	c2.prompt(c2.newSession(t.TempDir()), "search")
	if names := toolNames(m2.reqs[0]); !slices.Contains(names, "web_search") {
		t.Errorf("with a search service the model was offered %v", names)
	}
	got := toolMessage(m2.reqs[1], "call_1")
	for _, want := range []string{"1. [Agent Client Protocol](https://agentclientprotocol.com/)", "A protocol for editors and agents", "2. [GitHub repo]"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model read %q, want %q", got, want)
		}
	}
	if hits.Load() != 1 || len(c2.perms) != 0 {
		t.Errorf("%d searches, %d prompts; want 1 and none (the allow rule)", hits.Load(), len(c2.perms))
	}
}

func TestBinaryWebFetchFromCodeMode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	site, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<main><h1>Changelog</h1><ul><li>v2: faster</li></ul></main>`)
	})
	code := fmt.Sprintf(`const page = await tools.web_fetch({url: %q});
const bad = await tools.web_fetch({url: "http://169.254.169.254/"}).catch(e => String(e));
return page.title + "|" + page.content + "|" + bad;`, site.URL)
	args, _ := json.Marshal(map[string]string{"code": code, "description": "read the changelog"})
	m := &oaiMock{t: t}
	m.steps = append(m.steps, toolCalls([2]string{"run_code", string(args)}), answerText("done"))
	c := policyBridge(t, m, t.TempDir(), allowLocalConfig, "--tools-mode", "code", "--permission-mode", "bypass")
	c.prompt(c.newSession(t.TempDir()), "what changed?")
	got := toolMessage(m.reqs[1], "call_1")
	for _, want := range []string{"# Changelog", "- v2: faster", "cloud metadata"} {
		if !strings.Contains(got, want) {
			t.Errorf("the program returned %q, want %q in it", got, want)
		}
	}
	if title := c.cardTitle("call_1:code:1"); title != "Fetch "+site.URL {
		t.Errorf("the sub-call's card is titled %q", title)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests, want 1", hits.Load())
	}
}
