package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompactAt(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"80%", 0.8, ""}, {"0.5", 0.5, ""}, {" 100% ", 1, ""}, {"off", -1, ""},
		{"0", 0, "outside"}, {"150%", 0, "outside"}, {"lots", 0, "not a share"},
	}
	for _, tt := range tests {
		got, err := parseCompactAt(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}

	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	for _, k := range []string{"ACP_BRIDGE_CONFIG", "ACP_BRIDGE_MODEL", "OPENAI_BASE_URL"} {
		t.Setenv(k, "")
	}
	for body, want := range map[string]string{"limits:\n  compact_at: 60%\n": "", "limits:\n  compact_at: 2\n": "limits.compact_at"} {
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := parseFlags("acp-bridge", []string{"--config", p}, io.Discard)
		switch {
		case want != "":
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: err %v, want %q", body, err, want)
			}
		case err != nil || cfg.compactAt != 0.6:
			t.Errorf("%q: compactAt %v, err %v", body, cfg, err)
		}
	}
}
