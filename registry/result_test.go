package registry

import "testing"

// The model reads text, text resources and links; binary data is named,
// not pasted.
func TestResultText(t *testing.T) {
	cases := []struct {
		name string
		in   []Content
		want string
	}{
		{"text joined", []Content{Text("a"), Text("b")}, "ab"},
		{"image left out", []Content{Text("a"), {Type: "image", Data: "AQI=", MimeType: "image/png"}}, "a"},
		{"text resource", []Content{{Type: "resource", URI: "file:///n", Text: "milk"}}, "\n<resource uri=\"file:///n\">\nmilk\n</resource>\n"},
		{"blob resource", []Content{{Type: "resource", URI: "file:///b", Data: "/w=="}}, "\n[binary resource uri=\"file:///b\" omitted]\n"},
		{"link", []Content{{Type: "resource_link", URI: "file:///l", Name: "l"}}, "\n[resource_link name=\"l\" uri=\"file:///l\"]\n"},
	}
	for _, c := range cases {
		if got := (Result{Content: c.in}).Text(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
