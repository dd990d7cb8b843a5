package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
)

// FuzzFraming feeds arbitrary input to the line framing. Whatever arrives,
// nothing panics, every message passed on is a JSON object, and every answer
// the stream writes itself is one valid JSON-RPC error response per line.
func FuzzFraming(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":-1,"method":"x"}` + "\n" + `{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`[1,2]`, `{`, `"str"`, "\xff\xfe", `{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`, `{"jsonrpc":"2.0","method":"n"}` + "\r\n\r\n",
		`{"jsonrpc":"2.0","id":"\u0000acp-bridge-id:1","method":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		s := newLineStream(bytes.NewReader(in), &out, nil, 4096, slog.New(slog.DiscardHandler), nil)
		for {
			var v any
			err := s.ReadObject(&v)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("read: %v", err)
				}
				break
			}
			if _, ok := v.(map[string]any); !ok {
				t.Fatalf("passed on a non-object: %#v", v)
			}
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *Error          `json:"error"`
			}
			if err := json.Unmarshal(line, &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error == nil || len(resp.ID) == 0 {
				t.Fatalf("bad answer line %q (err %v)", line, err)
			}
		}
	})
}

// FuzzParams sends arbitrary params to every method. A handler only ever
// sees decoded params; anything that does not fit is -32602.
func FuzzParams(f *testing.F) {
	for _, seed := range []string{
		`{"protocolVersion":1}`, `{"cwd":"/tmp","mcpServers":[]}`, `{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}`,
		`{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`,
		`null`, `[]`, `{"cwd":1}`, `{"sessionId":null}`, `{"prompt":[{"type":"image"}]}`,
	} {
		f.Add([]byte(seed))
	}
	a := &fakeAgent{prompt: func(context.Context, *PromptRequest) (*PromptResponse, error) {
		return &PromptResponse{StopReason: StopEndTurn}, nil
	}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for name, m := range methods {
			_, err := m.handle(context.Background(), a, raw)
			if err == nil {
				continue
			}
			var e *Error
			if !errors.As(err, &e) || (e.Code != CodeInvalidParams && e.Code != CodeMethodNotFound) {
				t.Fatalf("%s(%q): %v", name, raw, err)
			}
		}
	})
}
