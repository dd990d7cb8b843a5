package mapping

import (
	"encoding/json"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// Each kind of result content becomes the matching ACP content block on the
// card (MCP tools return all of them).
func TestResultContentBlocks(t *testing.T) {
	cases := []struct {
		name string
		in   registry.Content
		want string
	}{
		{"text", registry.Text("hi"), `{"type":"content","content":{"type":"text","text":"hi"}}`},
		{"image", registry.Content{Type: "image", Data: "AQI=", MimeType: "image/png"},
			`{"type":"content","content":{"type":"image","data":"AQI=","mimeType":"image/png"}}`},
		{"text resource", registry.Content{Type: "resource", URI: "file:///n.txt", MimeType: "text/plain", Text: "milk"},
			`{"type":"content","content":{"type":"resource","resource":{"uri":"file:///n.txt","mimeType":"text/plain","text":"milk"}}}`},
		{"empty text resource", registry.Content{Type: "resource", URI: "file:///e"},
			`{"type":"content","content":{"type":"resource","resource":{"uri":"file:///e","text":""}}}`},
		{"blob resource", registry.Content{Type: "resource", URI: "file:///b", Data: "/w=="},
			`{"type":"content","content":{"type":"resource","resource":{"uri":"file:///b","blob":"/w=="}}}`},
		{"resource link", registry.Content{Type: "resource_link", URI: "file:///l", Name: "l"},
			`{"type":"content","content":{"type":"resource_link","uri":"file:///l","name":"l"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := New(nil, Options{Cwd: "/w"})
			tr.Translate(session.New(session.ToolCall{CallID: "c", Name: "t", Args: json.RawMessage(`{}`)}))
			ups := tr.Translate(session.New(session.ToolResult{CallID: "c",
				Result: registry.Result{Content: []registry.Content{c.in}}}))
			if len(ups) != 1 {
				t.Fatalf("updates: %+v", ups)
			}
			b, err := json.Marshal(ups[0])
			if err != nil {
				t.Fatal(err)
			}
			var u struct{ Content []json.RawMessage }
			if err := json.Unmarshal(b, &u); err != nil || len(u.Content) != 1 {
				t.Fatalf("update %s", b)
			}
			if got := string(u.Content[0]); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}
