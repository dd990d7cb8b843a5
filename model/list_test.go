package model

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestListModels(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		want    string // the ids, comma-separated
		inError string // "" = success
	}{
		{name: "OpenAI's list", status: 200, body: `{"object":"list","data":[{"id":"qwen3:8b","object":"model"},{"id":"llama3.2:3b","object":"model"}]}`, want: "qwen3:8b,llama3.2:3b"},
		{name: "Gemini's names", status: 200, body: `{"object":"list","data":[{"id":"models/gemini-2.5-flash"}]}`, want: "gemini-2.5-flash"},
		{name: "refused", status: 401, body: `{"error":{"message":"bad key"}}`, inError: "bad key"},
		{name: "no list", status: 200, body: `<html>`, inError: "/models"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var auth string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/models" {
					http.NotFound(w, r)
					return
				}
				auth = r.Header.Get("Authorization")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			got, err := ListModels(t.Context(), srv.URL+"/v1/", "sk-x", nil)
			if tc.inError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.inError) || !strings.Contains(err.Error(), srv.URL+"/v1/models") {
					t.Fatalf("err = %v, want one naming %s/v1/models with %q", err, srv.URL, tc.inError)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != tc.want || auth != "Bearer sk-x" {
				t.Fatalf("got %q, %v (auth %q); want %q", got, err, auth, tc.want)
			}
		})
	}
}
