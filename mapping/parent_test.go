package mapping

import (
	"encoding/json"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// A Code Mode sub-call's card carries a link to its run_code card; other
// cards carry no such key.
func TestParentLink(t *testing.T) {
	cases := []struct {
		name   string
		parent string
		want   string // the parentToolCallId in _meta, "" for none
	}{
		{"sub-call", "call_1", "call_1"},
		{"top-level call", "", ""},
	}
	for _, c := range cases {
		tr := New(nil, Options{Cwd: "/w"})
		ev := session.New(session.ToolCall{CallID: "call_1:code:1", Name: "read", Args: json.RawMessage(`{}`), Parent: c.parent})
		ups := tr.Translate(ev)
		if len(ups) != 1 {
			t.Fatalf("%s: %d updates", c.name, len(ups))
		}
		tc := ups[0].(acp.ToolCall)
		link, _ := tc.Meta[ParentMetaKey].(map[string]any)
		got, _ := link["parentToolCallId"].(string)
		if got != c.want {
			t.Errorf("%s: parent link = %q, want %q (meta %v)", c.name, got, c.want, tc.Meta)
		}
	}
}
