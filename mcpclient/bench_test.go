package mcpclient_test

import (
	"encoding/json"
	"testing"

	"github.com/acp-bridge/acp-bridge/mcpclient"
	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
	"github.com/acp-bridge/acp-bridge/registry"
)

// BenchmarkCallTool measures one MCP tool call as the pipeline makes it
// (validate the arguments, call, map the result), per transport.
func BenchmarkCallTool(b *testing.B) {
	httpSrv := mcptest.HTTP(false, "")
	b.Cleanup(httpSrv.Close)
	stdio, _ := stdioServer(b, "s", mcptest.ModeStdio)
	for _, srv := range []mcpclient.Server{stdio, {Name: "h", Type: mcpclient.HTTP, URL: httpSrv.URL}} {
		name := srv.Type
		if name == "" {
			name = "stdio"
		}
		b.Run(name, func(b *testing.B) {
			c, err := mcpclient.Connect(b.Context(), srv, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			var echo *registry.Def
			for _, d := range c.Tools() {
				if d.Name == mcpclient.ToolName(srv.Name, "echo") {
					echo = d
				}
			}
			args := json.RawMessage(`{"text":"hello"}`)
			b.ReportAllocs()
			for b.Loop() {
				if err := echo.Validate(args); err != nil {
					b.Fatal(err)
				}
				r, err := echo.Run(b.Context(), &registry.Call{ID: "c", Name: echo.Name, Args: args})
				if err != nil || r.Text() != "echo: hello" {
					b.Fatalf("%q %v", r.Text(), err)
				}
			}
		})
	}
}

// BenchmarkConnectStdio measures what one stdio server adds to session/new:
// start the process, initialize, list and define its tools, and stop it.
func BenchmarkConnectStdio(b *testing.B) {
	srv, _ := stdioServer(b, "s", mcptest.ModeStdio)
	b.ReportAllocs()
	for b.Loop() {
		c, err := mcpclient.Connect(b.Context(), srv, nil)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
