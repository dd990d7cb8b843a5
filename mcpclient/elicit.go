package mcpclient

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation is a server's request for input from the user
// (elicitation/create): a form (Schema) or a URL to visit (URL, ID).
type Elicitation struct {
	Server  string // the server's name, as configured
	Mode    string // "form" | "url"
	Message string
	Schema  json.RawMessage // form: the requested schema
	URL     string          // url
	ID      string          // url: the elicitation's id
}

// ElicitAnswer is the user's answer: "accept" (with Content for a form),
// "decline" or "cancel".
type ElicitAnswer struct {
	Action  string
	Content map[string]any
}

// Decline is the answer when nobody can be asked.
var Decline = ElicitAnswer{Action: "decline"}

// elicitation wires a session's elicitation options into the MCP client:
// the capability it advertises and the handler of elicitation/create. A
// server is always answered: without Options.Elicit, or for a mode the
// editor does not take, with a decline rather than an error, so a server
// that asks anyway goes on cleanly.
func (o *Options) elicitation(server string, copts *mcp.ClientOptions) {
	caps := &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
	if o.ElicitURL {
		caps.URL = &mcp.URLElicitationCapabilities{}
	}
	copts.Capabilities.Elicitation = caps
	copts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p := req.Params
		e := Elicitation{Server: server, Mode: p.Mode, Message: p.Message, URL: p.URL, ID: p.ElicitationID}
		if e.Mode == "" {
			e.Mode = "form"
		}
		if p.RequestedSchema != nil {
			e.Schema, _ = json.Marshal(p.RequestedSchema)
		}
		a := Decline
		if o.Elicit != nil && (e.Mode == "form" || e.Mode == "url" && o.ElicitURL) {
			var err error
			if a, err = o.Elicit(ctx, e); err != nil {
				return nil, err
			}
		}
		return &mcp.ElicitResult{Action: a.Action, Content: a.Content}, nil
	}
	if o.ElicitComplete != nil {
		copts.ElicitationCompleteHandler = func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			if req.Params != nil {
				o.ElicitComplete(req.Params.ElicitationID)
			}
		}
	}
}
