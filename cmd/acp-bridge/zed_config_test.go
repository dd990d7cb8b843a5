package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bypass is offered in the picker only when opted in, by any layer.
func TestOfferBypassLayers(t *testing.T) {
	dir := t.TempDir()
	on := filepath.Join(dir, "on.yaml")
	os.WriteFile(on, []byte("offer_bypass: true\n"), 0o644)
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    bool
		wantErr string
	}{
		{name: "default off"},
		{name: "flag", args: []string{"--offer-bypass"}, want: true},
		{name: "config file", args: []string{"--config", on}, want: true},
		{name: "environment", env: map[string]string{"ACP_BRIDGE_OFFER_BYPASS": "true"}, want: true},
		{name: "flag overrides the file", args: []string{"--config", on, "--offer-bypass=false"}},
		{name: "environment overrides the file", args: []string{"--config", on}, env: map[string]string{"ACP_BRIDGE_OFFER_BYPASS": "0"}},
		{name: "bad environment value", env: map[string]string{"ACP_BRIDGE_OFFER_BYPASS": "yes please"}, wantErr: "is not true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ACP_BRIDGE_CONFIG", "")
			t.Setenv("ACP_BRIDGE_OFFER_BYPASS", "")
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, _, err := parseFlags("acp-bridge", tc.args, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.offerBypass != tc.want {
				t.Errorf("offerBypass = %v, want %v", cfg.offerBypass, tc.want)
			}
		})
	}
	var help bytes.Buffer
	parseFlags("acp-bridge", []string{"--help"}, &help)
	for _, s := range []string{"-offer-bypass", "ACP_BRIDGE_OFFER_BYPASS", "offer_bypass:"} {
		if !strings.Contains(help.String(), s) {
			t.Errorf("--help does not mention %s", s)
		}
	}
}

// Without a level set, logs are warn and above when stderr is not a
// terminal (an editor keeps it), info with a log file; a set level wins.
func TestDefaultLogLevel(t *testing.T) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0) // a character device, not a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	tests := []struct {
		name   string
		cfg    config
		stderr io.Writer
		want   slog.Level
	}{
		{"pipe-like writer", config{}, &bytes.Buffer{}, slog.LevelWarn},
		{"/dev/null", config{}, devNull, slog.LevelWarn},
		{"log file", config{logFile: filepath.Join(t.TempDir(), "log")}, &bytes.Buffer{}, slog.LevelInfo},
		{"set level", config{logLevel: "debug"}, &bytes.Buffer{}, slog.LevelDebug},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, closeLog, err := newLogger(&tc.cfg, tc.stderr)
			if err != nil {
				t.Fatal(err)
			}
			defer closeLog()
			for _, lv := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
				if got, want := l.Enabled(t.Context(), lv), lv >= tc.want; got != want {
					t.Errorf("level %v enabled %v, want %v", lv, got, want)
				}
			}
		})
	}
}
