module github.com/acp-bridge/acp-bridge

go 1.26

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/sashabaranov/go-openai v1.43.0
	github.com/sergi/go-diff v1.4.5
	github.com/sourcegraph/jsonrpc2 v0.2.3
	golang.org/x/text v0.14.0
)

require github.com/coder/acp-go-sdk v0.13.0

require go.yaml.in/yaml/v3 v3.0.6

require go.uber.org/goleak v1.3.0
