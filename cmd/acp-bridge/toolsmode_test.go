package main

import (
	"log/slog"
	"testing"

	"github.com/acp-bridge/acp-bridge/codemode"
)

func TestToolsModeSetting(t *testing.T) {
	cases := []struct {
		value   string
		want    codemode.Mode
		wantErr bool
	}{
		{"native", codemode.ModeNative, false},
		{"code", codemode.ModeCode, false},
		{"both", codemode.ModeBoth, false},
		{"", codemode.ModeNative, false},
		{"sometimes", "", true},
	}
	for _, c := range cases {
		opts, err := agentOptions(&config{tools: c.value, maxTurn: 1}, slog.New(slog.DiscardHandler))
		if (err != nil) != c.wantErr {
			t.Errorf("%q: err = %v", c.value, err)
			continue
		}
		if err == nil && opts.ToolsMode != c.want {
			t.Errorf("%q: mode = %q, want %q", c.value, opts.ToolsMode, c.want)
		}
	}
}
