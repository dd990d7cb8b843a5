package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-bridge/acp-bridge/registry"
)

// maxName is the registry's (and most model APIs') limit on tool names.
const maxName = 64

// ToolName is the registry name of a server's tool: mcp__<server>__<tool>,
// with characters the model APIs reject replaced by '_', and names past 64
// characters shortened with a hash so that distinct tools stay distinct.
func ToolName(server, tool string) string {
	name := "mcp__" + clean(server) + "__" + clean(tool)
	if len(name) <= maxName {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:maxName-len(suffix)] + suffix
}

func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// define turns one MCP tool into a registry definition: the server's schema
// as is, a call through the session, every call asking the user first.
// taken holds the names already used in this listing.
func (c *Conn) define(t *mcp.Tool, taken map[string]bool) (*registry.Def, error) {
	name := ToolName(c.srv.Name, t.Name)
	if taken[name] {
		return nil, fmt.Errorf("its name %q collides with another tool of this server", name)
	}
	raw, err := Schema(t.InputSchema)
	if err != nil {
		return nil, err
	}
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	if title == "" {
		title = t.Name
	}
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	server, tool, cs := c.srv.Name, t.Name, c.cs
	desc := t.Description
	if desc == "" {
		desc = title
	}
	def := registry.Tool[json.RawMessage, []registry.Content]{
		Name:        name,
		Description: desc + " (from MCP server " + server + ")",
		Parameters:  raw,
		// The server validates its own input; the model reads the schema
		// as the server sent it, whatever draft or keywords it uses.
		RawSchema: true,
		Run: func(ctx context.Context, _ *registry.Call, args json.RawMessage) ([]registry.Content, error) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err() // the pipeline reports an aborted call
				}
				return nil, registry.Errorf("MCP_ERROR", fmt.Sprintf("MCP server %s: %v", server, err))
			}
			content := Content(res)
			if res.IsError {
				msg := registry.Result{Content: content}.Text()
				if msg == "" {
					msg = "the tool reported an error without a message"
				}
				return nil, registry.Errorf("MCP_TOOL_ERROR", msg)
			}
			return content, nil
		},
		Render: func(_ json.RawMessage, out []registry.Content) []registry.Content { return out },
		// A server that never answers must not hold the turn forever: the
		// pipeline's timeout policy fails the call (TOOL_TIMEOUT) and the
		// model can go on. Ten minutes leaves room for slow, real work.
		Timeout: CallTimeout,
		// readOnlyHint is what the server says its tool is: plan mode lets
		// such a call run (and it still asks, below).
		Facts: registry.Facts{ReadOnly: readOnly},
		PresentCall: func(json.RawMessage) registry.View {
			return registry.GenericCard{Title: server + ": " + title, Kind: "other"}
		},
		// The server's hints are not trusted for permission, only for
		// scheduling: a read-only call may overlap others.
		ConcurrencySafe: func(json.RawMessage) bool { return readOnly },
		Permission: func(*registry.Call, json.RawMessage) *registry.Permission {
			return &registry.Permission{
				Reason:  fmt.Sprintf("tool %s of MCP server %s", tool, server),
				Key:     "mcp:" + server + ":" + tool,
				Subject: mcpSubject(tool, server),
			}
		},
	}
	d, err := registry.Define(def)
	if err != nil {
		return nil, err
	}
	taken[name] = true
	return d, nil
}

// CallTimeout bounds one MCP tool call.
var CallTimeout = 10 * time.Minute

// Schema normalizes a server's input schema to the JSON object the model
// is shown. MCP requires an object schema; servers often send {} or bare
// properties, which mean one, so a missing "type" becomes "object".
func Schema(in any) (json.RawMessage, error) {
	var m map[string]any
	switch v := in.(type) {
	case nil:
	case map[string]any:
		m = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	return json.Marshal(m)
}

// Content maps a tool result to registry content: text, images and embedded
// resources as they are; audio, which ACP cards do not show, as a note; and
// structured content as JSON text when the server sent nothing else.
func Content(res *mcp.CallToolResult) []registry.Content {
	var out []registry.Content
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out = append(out, registry.Text(c.Text))
		case *mcp.ImageContent:
			out = append(out, registry.Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
		case *mcp.AudioContent:
			out = append(out, registry.Text(fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data))))
		case *mcp.ResourceLink:
			out = append(out, registry.Content{Type: "resource_link", URI: c.URI, Name: c.Name, MimeType: c.MIMEType})
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			r := registry.Content{Type: "resource", URI: c.Resource.URI, MimeType: c.Resource.MIMEType}
			if c.Resource.Blob != nil {
				r.Data = base64.StdEncoding.EncodeToString(c.Resource.Blob)
			} else {
				r.Text = c.Resource.Text
			}
			out = append(out, r)
		default:
			b, _ := json.Marshal(c)
			out = append(out, registry.Text(string(b)))
		}
	}
	if len(out) == 0 && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			out = append(out, registry.Text(string(b)))
		}
	}
	return out
}

// mcpSubject names what an "always" answer covers, short enough for an
// option name to show whole (a name cut mid-word does not say it).
func mcpSubject(tool, server string) string {
	for _, s := range []string{fmt.Sprintf("`%s` from %s", tool, server), fmt.Sprintf("`%s` of this MCP server", tool)} {
		if utf8.RuneCountInString(s) <= 44 {
			return s
		}
	}
	return "this MCP server's tool"
}
