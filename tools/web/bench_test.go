package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkHTMLToMarkdown is where a page's conversion goes, in process:
// a generated documentation page of about 2 MB (sections of headings,
// paragraphs with code and links, lists, code blocks, tables, scripts)
// through htmlToMarkdown. The same page through the binary is
// cmd/acp-bridge's BenchmarkBinaryWebFetch.
//
//	go test ./tools/web -run '^$' -bench HTMLToMarkdown -benchtime 10x
func BenchmarkHTMLToMarkdown(b *testing.B) {
	var p strings.Builder
	p.WriteString("<html><head><title>T</title><script>x()</script></head><body><nav>menu</nav><main>")
	for i := 0; p.Len() < 2<<20; i++ {
		fmt.Fprintf(&p, `<h2 id="h%d">Heading %d</h2><p>Text with <code>code()</code>, <a href="rel/%d.html">a link</a> and <em>emphasis</em>.</p>`+
			`<ol><li>one</li><li>two</li></ol><pre><code>line one
line two</code></pre><table><tr><th>k</th><th>v</th></tr><tr><td>%d</td><td>x</td></tr></table><script>t(%d)</script>`, i, i, i, i, i)
	}
	p.WriteString("</main></body></html>")
	page := []byte(p.String())
	b.SetBytes(int64(len(page)))
	var md string
	for b.Loop() {
		var err error
		if _, md, err = htmlToMarkdown(context.Background(), page, "text/html", "https://docs.example/a/"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(md)), "md-bytes")
}
