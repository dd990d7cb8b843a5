package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Headers carry a provider's key: printed or logged in any way they show
// their names only, while the wire form keeps them whole.
func TestHeadersNeverPrintTheirValues(t *testing.T) {
	const key = "sk-printed-canary"
	req := &SetProviderRequest{ProviderID: "main", APIType: "openai", BaseURL: "https://gw.example/v1",
		Headers: Headers{"Authorization": "Bearer " + key, "X-Org": "org-1"}}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("set", "headers", req.Headers, "req", req)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("set", "headers", req.Headers)
	for _, out := range []string{
		fmt.Sprint(req.Headers), fmt.Sprintf("%v", req), fmt.Sprintf("%+v", req), fmt.Sprintf("%#v", req),
		fmt.Sprintf("%s", req.Headers), fmt.Sprintf("%q", req.Headers), logged.String(),
	} {
		if strings.Contains(out, key) || strings.Contains(out, "org-1") {
			t.Errorf("a header value printed: %s", out)
		}
		if !strings.Contains(out, "Authorization: [redacted]") {
			t.Errorf("the header names are not shown: %s", out)
		}
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back SetProviderRequest
	if err := json.Unmarshal(b, &back); err != nil || back.Headers["Authorization"] != "Bearer "+key {
		t.Errorf("the wire form lost the key: %s (%v)", b, err)
	}
}
