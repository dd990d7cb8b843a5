package mcptest

import (
	"context"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sign-in server's URL elicitation, as a client sees it.
const (
	SignInURL     = "https://auth.example/device?code=ABCD"
	SignInID      = "el-7"
	SignInMessage = "Sign in to the service, please."
)

// SignInHTTP serves, over streamable HTTP, a server with one tool,
// sign_in, that needs the user to visit a page. To a client that takes URL
// elicitations it returns a URL-mode input request (the multi round-trip
// form the current MCP protocol wants); called again with the answer, it
// reports an accepted elicitation complete
// (notifications/elicitation/complete) and says "sign-in: ACTION". A
// client that takes none is told so in the result, and never asked.
func SignInHTTP() *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "signin", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "sign_in", Description: "Sign the user in to the service."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			text := func(s string) *mcp.CallToolResult {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
			}
			if ip := req.Session.InitializeParams(); ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.Capabilities.Elicitation.URL == nil {
				return text("sign-in: the client takes no URL elicitation"), nil, nil
			}
			r, ok := req.Params.InputResponses["login"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"login": &mcp.ElicitParams{Mode: "url",
					Message: SignInMessage, URL: SignInURL, ElicitationID: SignInID}}}, nil, nil
			}
			if r.Action == "accept" {
				if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: SignInID}); err != nil {
					return text("signed in, but the completion was not sent: " + err.Error()), nil, nil
				}
			}
			return text("sign-in: " + r.Action), nil, nil
		})
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}
