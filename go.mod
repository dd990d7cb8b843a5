module github.com/acp-bridge/acp-bridge

go 1.26

require (
	github.com/coder/acp-go-sdk v0.13.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/sergi/go-diff v1.4.5
	github.com/sourcegraph/jsonrpc2 v0.2.3
	golang.org/x/text v0.14.0
)
