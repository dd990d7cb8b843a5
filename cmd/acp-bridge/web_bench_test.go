package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkBinaryWebFetch times web_fetch of a 2 MB documentation page as
// the user meets it: the release build started fresh over its real stdio,
// a scripted model calling web_fetch on a local server (opened by
// WebFetch(domain:127.0.0.1)), twice, with two URLs, so both calls are
// requests (the second in a warm process). Sub-benchmarks:
//
//   - html: the page as text/html, turned into Markdown;
//   - text: the same bytes as text/plain, read as they are: the same
//     request, transfer and windowing without the conversion, the
//     yardstick for what the conversion costs.
//
// Reported, medians: the first call's card from in_progress to completed
// (card-ms), process start to that card's completed (cold-ms), the second
// call's card (again-ms), the load average at the start and end.
//
//	go test ./cmd/acp-bridge -run '^$' -bench BinaryWebFetch -benchtime 7x
//
// ACP_BRIDGE_WEB_BIN names a binary to time instead of a fresh release build.
func BenchmarkBinaryWebFetch(b *testing.B) {
	bin := os.Getenv("ACP_BRIDGE_WEB_BIN")
	if bin == "" {
		var err error
		if bin, err = releaseBin(); err != nil {
			b.Fatal(err)
		}
	}
	page := docsPage(2 << 20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := "text/html; charset=utf-8"
		if strings.HasPrefix(r.URL.Path, "/text") {
			ct = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.Write(page)
	}))
	defer srv.Close()
	for _, kind := range []string{"html", "text"} {
		b.Run(kind, func(b *testing.B) {
			load0 := loadAvg()
			dir := b.TempDir()
			os.MkdirAll(filepath.Join(dir, "acp-bridge"), 0o755)
			os.WriteFile(filepath.Join(dir, "acp-bridge", "config.yaml"), []byte(allowLocalConfig), 0o644)
			script := filepath.Join(dir, "script.json")
			call := func(n int) string {
				return fmt.Sprintf(`{"parts":[{"tool_call":{"name":"web_fetch","arguments":{"url":"%s/%s/page-%d"}}}]}`, srv.URL, kind, n)
			}
			os.WriteFile(script, []byte(`{"responses":[`+call(1)+`,`+call(2)+`,{"parts":[{"text":"done"}]}]}`), 0o644)
			var first, cold, again []time.Duration
			var summary string
			for b.Loop() {
				r := searchOnce(b, bin, dir, script, dir)
				first, cold, again = append(first, r.cards[0]), append(cold, r.cold), append(again, r.cards[1])
				summary = r.summary
			}
			b.ReportMetric(msOf(first), "card-ms")
			b.ReportMetric(msOf(cold), "cold-ms")
			b.ReportMetric(msOf(again), "again-ms")
			b.ReportMetric(load0, "load-start")
			b.ReportMetric(loadAvg(), "load-end")
			b.Logf("%s: %d bytes of page; the card starts %q", kind, len(page), summary)
		})
	}
}

// allowLocalConfig is a config file whose rule opens the local test
// servers' host to web_fetch.
const allowLocalConfig = "permissions:\n  allow: [\"WebFetch(domain:127.0.0.1)\"]\n"

// releaseBin builds the bridge as a release is built, once.
var releaseBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "acp-bridge-web-bench-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "acp-bridge")
	return bin, goBuild("", bin, ".", true)
})

// docsPage is a documentation page of about n bytes, shaped like the
// pages models read: a head of styles and scripts, a navigation sidebar,
// then sections of headings, paragraphs with inline code and links, code
// blocks, lists and tables.
func docsPage(n int) []byte {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Reference — Example docs</title>
<link rel="stylesheet" href="/s.css"><style>body{font:14px sans-serif}.x{color:#333}</style>
<script>window.dataLayer=[];function gtag(){dataLayer.push(arguments)}</script></head><body>
<header><a href="/">Example</a><form action="/search"><input name="q"></form></header><nav><ul>`)
	for i := range 200 {
		fmt.Fprintf(&b, `<li><a href="/docs/page-%d.html">Page %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></nav><main><h1>Reference</h1>`)
	for i := 0; b.Len() < n-2000; i++ {
		fmt.Fprintf(&b, `<section id="s%d"><h2>Section %d: <code>Client.Do%d</code></h2>
<p>The <code>Do%d</code> method sends a request and returns its <em>response</em>, following the <a href="../guide/redirects.html#s%d">redirect policy</a> of the client. See also <a href="https://pkg.go.dev/net/http#Client">net/http</a> and <strong>timeouts</strong>.</p>
<ul><li>It never modifies the request.</li><li>It closes the body on error; the caller closes it otherwise.</li><li>Errors are of type <code>*url.Error</code>.</li></ul>
<pre><code class="language-go">resp, err := client.Do%d(req)
if err != nil {
	return fmt.Errorf("section %d: %%w", err)
}
defer resp.Body.Close()</code></pre>
<table><thead><tr><th>Field</th><th>Type</th><th>Default</th></tr></thead><tbody>
<tr><td>Timeout</td><td><code>time.Duration</code></td><td>0</td></tr><tr><td>Jar</td><td><code>CookieJar</code></td><td>nil</td></tr></tbody></table>
<script>track(%d)</script></section>
`, i, i, i, i, i, i, i, i)
	}
	b.WriteString(`</main><footer>© Example</footer></body></html>`)
	return []byte(b.String())
}
