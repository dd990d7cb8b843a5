package model

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A provider an editor configured sends its headers with every request,
// in place of the library's bearer key, and to its own host only: a
// redirect elsewhere is not followed with them.
func TestOpenAIHeaders(t *testing.T) {
	headers := map[string]string{"Authorization": "Bearer sk-editor", "X-Api-Key": "sk-editor-2", "HTTP-Referer": "https://editor.example"}
	m, srv := newMock(t, sse{events: []string{chunk(`{"content":"x"}`, "stop")}})
	p := provider(t, srv.URL, func(o *OpenAIOptions) { o.APIKey = ""; o.Headers = headers })
	if got := collectStream(t, p, nil); got.err != nil || got.text != "x" {
		t.Fatalf("request: %v %q", got.err, got.text)
	}
	if m.auth[0] != "Bearer sk-editor" {
		t.Errorf("Authorization %q, want the editor's", m.auth[0])
	}

	var seen []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Clone())
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		// 127.0.0.1 and localhost are different hosts to the client.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	p = provider(t, redirect.URL, func(o *OpenAIOptions) { o.APIKey = ""; o.Headers = headers; o.HTTPClient = &http.Client{} })
	got := collectStream(t, p, nil)
	if got.err == nil || !strings.Contains(got.err.Error(), "redirected to another host") {
		t.Errorf("a redirect to another host: %v", got.err)
	}
	if len(seen) != 0 {
		t.Errorf("the other host got the request, with headers %v", seen)
	}
}

func TestListModelsWithHeaders(t *testing.T) {
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Org"))
		io.WriteString(w, `{"object":"list","data":[{"id":"llama3","object":"model"},{"id":"models/gemini-2.5-flash","object":"model"}]}`)
	}))
	defer srv.Close()
	names, err := ListModelsWith(context.Background(), srv.URL+"/v1", map[string]string{"Authorization": "Bearer sk-l", "X-Org": "o"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"llama3", "gemini-2.5-flash"}, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Bearer sk-l|o"}, auth); d != "" {
		t.Errorf("headers sent (-want +got):\n%s", d)
	}
}
