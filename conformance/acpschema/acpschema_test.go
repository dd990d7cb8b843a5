package acpschema

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestChecker(t *testing.T) {
	s, err := Default()
	if err != nil {
		t.Skipf("no ACP schema: %v", err)
	}
	type line struct {
		dir  Direction
		msg  string
		want string // "" valid; else a substring of the error
	}
	cases := []struct {
		name  string
		lines []line
	}{
		{"initialize round trip", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, ""},
			{FromAgent, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`, ""},
		}},
		{"result of the wrong type", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`, ""},
			{FromAgent, `{"jsonrpc":"2.0","id":1,"result":{"session":"x"}}`, "NewSessionResponse"},
		}},
		{"tool_call without a title", []line{
			{FromAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"a"}}}`, "SessionNotification"},
		}},
		{"a client method called by the client", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`, "a method the client serves"},
		}},
		{"notification with an id", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":3,"method":"session/cancel","params":{"sessionId":"s"}}`, "carries an id"},
		}},
		{"request without an id", []line{
			{ToAgent, `{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, "has no id"},
		}},
		{"unknown plain method, free extension", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":4,"method":"no/such","params":{}}`, "not in the schema"},
			{ToAgent, `{"jsonrpc":"2.0","id":5,"method":"_x/y","params":{"anything":1}}`, ""},
		}},
		{"response to nothing", []line{
			{FromAgent, `{"jsonrpc":"2.0","id":9,"result":{}}`, "never sent"},
		}},
		{"error object", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"r","mcpServers":[]}}`, ""},
			{FromAgent, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"cwd"}}`, ""},
			{FromAgent, `{"jsonrpc":"2.0","id":7,"error":{"message":"no code"}}`, "Error"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker(s)
			for i, l := range tc.lines {
				err := c.Check(l.dir, []byte(l.msg))
				switch {
				case l.want == "" && err != nil:
					t.Errorf("line %d: %v", i+1, err)
				case l.want != "" && (err == nil || !strings.Contains(err.Error(), l.want)):
					t.Errorf("line %d: error %v, want one containing %q", i+1, err, l.want)
				}
			}
		})
	}
	if err := NewChecker(s).Check(FromAgent, []byte("hello")); !errors.Is(err, ErrNotJSONRPC) {
		t.Errorf("non-JSON: %v", err)
	}
}

// sources are the schema releases a test can check against: the one the
// module graph provides always, the newer one when it is available.
func sources(t *testing.T) map[string]*Schema {
	t.Helper()
	out := map[string]*Schema{}
	if d, err := ModuleDir(); err == nil {
		s, err := Load(filepath.Join(d, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		out["module"] = s
	}
	d, err := Newer()
	if err != nil {
		t.Fatal(err)
	}
	if d != "" {
		s, err := Load(filepath.Join(d, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		out["newer"] = s
	}
	if len(out) == 0 {
		t.Skip("no ACP schema at all")
	}
	return out
}

// TestNewerVariants: what a schema can express is checked, and a variant of
// a later release that it cannot express is reported as unchecked, not as
// valid and not as wrong.
func TestNewerVariants(t *testing.T) {
	notif := func(update string) []byte {
		return []byte(`{"sessionId":"s","update":` + update + `}`)
	}
	cases := []struct {
		name, def, msg string
		bad            bool
		needs          string // a $defs type of the release the case needs
	}{
		{"usage_update", "SessionNotification", `{"sessionUpdate":"usage_update","used":1,"size":2}`, false, ""},
		{"usage_update without size", "SessionNotification", `{"sessionUpdate":"usage_update","used":1}`, true, ""},
		{"notice", "SessionNotification", `{"sessionUpdate":"notice","severity":"warning","title":"Retrying"}`, false, "Notice"},
		{"notice with an empty title", "SessionNotification", `{"sessionUpdate":"notice","severity":"warning","title":""}`, true, "Notice"},
		{"notice without a severity", "SessionNotification", `{"sessionUpdate":"notice","title":"x"}`, true, "Notice"},
		{"tool_call with a name", "SessionNotification", `{"sessionUpdate":"tool_call","toolCallId":"a","title":"ls","name":"bash"}`, false, ""},
		{"tool_call with a numeric name", "SessionNotification", `{"sessionUpdate":"tool_call","toolCallId":"a","title":"ls","name":3}`, true, "Notice"},
		{"prompt response with usage", "PromptResponse", `{"stopReason":"end_turn","usage":{"totalTokens":3,"inputTokens":2,"outputTokens":1}}`, false, ""},
		{"prompt response with usage of the wrong type", "PromptResponse", `{"stopReason":"end_turn","usage":{"totalTokens":"many"}}`, true, "SystemPrompt"},
		{"fork request with a system prompt", "ForkSessionRequest", `{"sessionId":"s","cwd":"/w","systemPrompt":{"mode":"append","content":[{"type":"text","text":"Be brief."}]}}`, false, "SystemPrompt"},
		{"new session with a boolean option", "NewSessionResponse", `{"sessionId":"s","configOptions":[{"id":"m","name":"Mode","type":"select","currentValue":"a","options":[{"value":"a","name":"A"}]},{"id":"auto","name":"Auto","type":"boolean","currentValue":true}]}`, false, ""},
		{"new session with a boolean option whose value is a string", "NewSessionResponse", `{"sessionId":"s","configOptions":[{"id":"auto","name":"Auto","type":"boolean","currentValue":"true"}]}`, true, ""},
		{"new session with a boolean option and a bad select", "NewSessionResponse", `{"sessionId":"s","configOptions":[{"id":"m","name":"Mode","type":"select","currentValue":"a"},{"id":"auto","name":"Auto","type":"boolean","currentValue":false}]}`, true, ""},
		{"fork request with a system prompt without content", "ForkSessionRequest", `{"sessionId":"s","cwd":"/w","systemPrompt":{"mode":"append"}}`, true, "SystemPrompt"},
	}
	for src, s := range sources(t) {
		for _, tc := range cases {
			t.Run(src+"/"+tc.name, func(t *testing.T) {
				has := func(def string) bool { return s.Has(def) || (s.Unstable != nil && s.Unstable.Has(def)) }
				if tc.needs != "" && !has(tc.needs) {
					t.Skipf("the %s schema predates %s", src, tc.needs)
				}
				if !has(tc.def) {
					t.Skipf("the %s schema has no %s", src, tc.def)
				}
				msg := []byte(tc.msg)
				if tc.def == "SessionNotification" {
					msg = notif(tc.msg)
				}
				err := s.Validate(tc.def, msg)
				switch {
				case tc.bad && err == nil:
					t.Errorf("accepted %s", msg)
				case !tc.bad && err != nil:
					t.Errorf("%s: %v", msg, err)
				}
			})
		}
		t.Run(src+"/checker", func(t *testing.T) {
			c := NewChecker(s)
			line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"info","title":"x"}}}`
			if err := c.Check(FromAgent, []byte(line)); err != nil {
				t.Fatal(err)
			}
			if got := len(c.Unchecked()); got != map[bool]int{true: 0, false: 1}[s.HasUpdate("notice")] {
				t.Errorf("unchecked %v with notice in the schema: %v", c.Unchecked(), s.HasUpdate("notice"))
			}
		})
	}
}

// The module graph's schema is the older release: notices are beyond it,
// and usage_update is only in its unstable set. If this fails, the
// acp-go-sdk dependency moved and the narrowing above may be unneeded.
func TestModuleSchemaIsOlder(t *testing.T) {
	s, ok := sources(t)["module"]
	if !ok {
		t.Skip("no acp-go-sdk module")
	}
	if s.HasUpdate("notice") || !s.Lacks("notice") || s.Lacks("usage_update") || s.Unstable == nil {
		t.Errorf("notice in the schema: %v, lacks notice: %v, lacks usage_update: %v", s.HasUpdate("notice"), s.Lacks("notice"), s.Lacks("usage_update"))
	}
	err := s.Validate("SessionNotification", []byte(`{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"info","title":"x"}}`))
	if !errors.Is(err, ErrNotInSchema) {
		t.Errorf("notice against the older schema: %v", err)
	}
	c := NewChecker(s)
	if err := c.Check(ToAgent, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/delete","params":{"sessionId":"s"}}`)); err != nil || len(c.Unchecked()) != 1 {
		t.Errorf("session/delete against the older schema: %v, unchecked %v", err, c.Unchecked())
	}
	if err := c.Check(ToAgent, []byte(`{"jsonrpc":"2.0","id":2,"method":"session/no_such","params":{}}`)); err == nil {
		t.Error("a method of no release passed")
	}
	// providers/* of 1.25 (providerId) against the older draft (id): not
	// checked, listed, and its response too.
	c = NewChecker(s)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"providers/set","params":{"providerId":"main","apiType":"openai","baseUrl":"http://h/v1"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"providers/list","params":{}}`,
	} {
		if err := c.Check(ToAgent, []byte(line)); err != nil {
			t.Errorf("%s against the older schema: %v", line, err)
		}
	}
	if err := c.Check(FromAgent, []byte(`{"jsonrpc":"2.0","id":4,"result":{"providers":[{"providerId":"main","supported":["openai"],"required":true}]}}`)); err != nil {
		t.Errorf("providers/list's answer against the older schema: %v", err)
	}
	if n := len(c.Unchecked()); n != 3 {
		t.Errorf("unchecked %d messages, want the 3 providers messages: %v", n, c.Unchecked())
	}
	// Both entries of the table of older definitions apply to it.
	var older []string
	for _, o := range s.older() {
		older = append(older, o.what)
	}
	if len(older) != len(olderDefs) {
		t.Errorf("older definitions found in the module's schema: %q, want all %d", older, len(olderDefs))
	}
}
