package mcpclient

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-bridge/acp-bridge/registry"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	cases := []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"My Server", "do.it/now", "mcp__My_Server__do_it_now"},
		{"é", "t", "mcp_____t"},
		{"", "t", "mcp_____t"},
	}
	for _, c := range cases {
		if got := ToolName(c.server, c.tool); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	a, b := ToolName("s", long+"a"), ToolName("s", long+"b")
	if len(a) != maxName || len(b) != maxName || a == b {
		t.Errorf("long names: %q (%d), %q (%d)", a, len(a), b, len(b))
	}
}

func TestSchema(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, `{"type":"object"}`},
		{map[string]any{}, `{"type":"object"}`},
		{map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}},
			`{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{json.RawMessage(`{"type":"object","required":["x"]}`), `{"required":["x"],"type":"object"}`},
	}
	for _, c := range cases {
		got, err := Schema(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("Schema(%v) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := Schema(json.RawMessage(`[1]`)); err == nil {
		t.Error("an array schema was accepted")
	}
}

// A server's schema is not compiled here, whatever it uses: it reaches the
// model as sent, and arguments are checked only as a JSON object.
func TestDefineUncompilableSchema(t *testing.T) {
	c := &Conn{srv: Server{Name: "s"}, log: discard()}
	raw := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "https://example.invalid/a.json"}}}
	d, err := c.define(&mcp.Tool{Name: "t", InputSchema: raw}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(d.Parameters()), "example.invalid") {
		t.Errorf("model-facing schema changed: %s", d.Parameters())
	}
	if err := d.Validate(json.RawMessage(`{"a":1}`)); err != nil {
		t.Errorf("validation rejected what the server decides: %v", err)
	}
	if err := d.Validate(json.RawMessage(`[1]`)); err == nil {
		t.Error("loose validation accepted a non-object")
	}
	if _, err := c.define(&mcp.Tool{Name: "t", InputSchema: raw}, map[string]bool{"mcp__s__t": true}); err == nil {
		t.Error("a duplicate name was defined")
	}
}

func TestContent(t *testing.T) {
	size := int64(3)
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a"},
		&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/gif"},
		&mcp.AudioContent{Data: []byte{1, 2, 3}, MIMEType: "audio/wav"},
		&mcp.ResourceLink{URI: "file:///l", Name: "l", Size: &size},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", MIMEType: "application/octet-stream", Blob: []byte{0xff}}},
		&mcp.EmbeddedResource{},
	}}
	want := []registry.Content{
		{Type: "text", Text: "a"},
		{Type: "image", Data: "AQI=", MimeType: "image/gif"},
		{Type: "text", Text: "[audio audio/wav, 3 bytes, not shown]"},
		{Type: "resource_link", URI: "file:///l", Name: "l"},
		{Type: "resource", URI: "file:///b", MimeType: "application/octet-stream", Data: "/w=="},
	}
	got := Content(res)
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	structured := Content(&mcp.CallToolResult{StructuredContent: map[string]int{"n": 1}})
	if len(structured) != 1 || structured[0].Text != `{"n":1}` {
		t.Errorf("structured only: %+v", structured)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
