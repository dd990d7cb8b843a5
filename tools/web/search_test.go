package web

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

func TestSearchSearxNG(t *testing.T) {
	var got string
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Path + "?" + r.URL.RawQuery
		if r.URL.Query().Get("format") != "json" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"query":"go ssrf","results":[
			{"url":"https://go.dev/doc/","title":"Go  docs","content":"The <b>Go</b> documentation"},
			{"url":"javascript:alert(1)","title":"bad","content":"dropped"},
			{"url":"https://pkg.go.dev/net","title":"net","content":"Package net"}]}`)
	})
	o := &Options{Guard: noProxy.Guard, Search: &Search{SearxNG: s.URL}}
	r, err := runSearch(context.Background(), o, searchArgs{Query: "go ssrf"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{{Title: "Go docs", URL: "https://go.dev/doc/", Snippet: "The Go documentation"}, {Title: "net", URL: "https://pkg.go.dev/net", Snippet: "Package net"}}
	if len(r.Results) != 2 || r.Results[0] != want[0] || r.Results[1] != want[1] {
		t.Errorf("results = %+v", r.Results)
	}
	if !strings.HasPrefix(got, "/search?") || !strings.Contains(got, "q=go+ssrf") {
		t.Errorf("asked %s", got)
	}
	text := renderResults(searchArgs{}, r)[0].Text
	if !strings.Contains(text, "1. [Go docs](https://go.dev/doc/)\n   The Go documentation") {
		t.Errorf("the model reads %q", text)
	}
	if d, err := registry.Define(searchTool(o)); err != nil || d.Check() != nil || !d.Facts.ReadOnly {
		t.Errorf("define: %v", err)
	}
}

func TestSearchErrors(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/forbidden/search":
			w.WriteHeader(http.StatusForbidden)
		case "/moved/search":
			http.Redirect(w, r, "http://169.254.169.254/", http.StatusFound)
		case "/html/search":
			io.WriteString(w, "<html>not json</html>")
		}
	})
	for path, want := range map[string]string{"/forbidden": "add json to search.formats", "/moved": "redirect", "/html": "not a result list"} {
		o := &Options{Guard: noProxy.Guard, Search: &Search{SearxNG: s.URL + path}}
		_, err := runSearch(context.Background(), o, searchArgs{Query: "q"})
		if code(err) != CodeSearchFailed || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}

func TestSearchBrave(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "key-1" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"type":"search","web":{"results":[{"title":"T","url":"https://a.example/","description":"D"}]}}`)
	})
	o := &Options{Guard: noProxy.Guard, Search: &Search{BraveKey: "key-1", BraveURL: s.URL}}
	r, err := runSearch(context.Background(), o, searchArgs{Query: "q", Count: 3})
	if err != nil || len(r.Results) != 1 || r.Results[0] != (Result{Title: "T", URL: "https://a.example/", Snippet: "D"}) {
		t.Errorf("brave: %+v, %v", r, err)
	}
	o.Search.BraveKey = "wrong"
	if _, err := runSearch(context.Background(), o, searchArgs{Query: "q"}); code(err) != CodeSearchFailed || !strings.Contains(err.Error(), "401") {
		t.Errorf("a bad key: %v", err)
	}
}
