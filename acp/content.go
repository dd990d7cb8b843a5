package acp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Meta is the free-form _meta object every ACP type may carry.
type Meta map[string]any

// ContentBlock is the ACP content union (text, image, audio, resource_link,
// resource), discriminated by Type. Only the fields of the block's type are
// written on the wire.
type ContentBlock struct {
	Type string // "text" | "image" | "audio" | "resource_link" | "resource"

	Text        string            // text
	Data        string            // image, audio: base64
	MimeType    string            // image, audio, resource_link (optional)
	URI         string            // image (optional), resource_link
	Name        string            // resource_link
	Title       string            // resource_link (optional)
	Description string            // resource_link (optional)
	Size        *int64            // resource_link (optional)
	Resource    *EmbeddedResource // resource
	Annotations json.RawMessage   // any type (optional)
	Meta        Meta
}

// EmbeddedResource is the resource of a "resource" content block: text or blob.
type EmbeddedResource struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// TextBlock returns a text content block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: "text", Text: text} }

// TextSeparator is what goes between two consecutive text blocks of one
// message, before and next, so they read as two paragraphs: a blank line,
// or less where the text already breaks the line. Clients differ in how
// they split a message into blocks (codecompanion sends a re-sent stopped
// message as a second block), and a client shows consecutive chunks of one
// message glued together.
func TextSeparator(before, next string) string {
	switch {
	case before == "" || next == "" || strings.HasSuffix(before, "\n\n") || strings.HasPrefix(next, "\n"):
		return ""
	case strings.HasSuffix(before, "\n"):
		return "\n"
	}
	return "\n\n"
}

type contentWire struct {
	Type        string            `json:"type"`
	Text        *string           `json:"text,omitempty"`
	Data        *string           `json:"data,omitempty"`
	MimeType    *string           `json:"mimeType,omitempty"`
	URI         *string           `json:"uri,omitempty"`
	Name        *string           `json:"name,omitempty"`
	Title       *string           `json:"title,omitempty"`
	Description *string           `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Resource    *EmbeddedResource `json:"resource,omitempty"`
	Annotations json.RawMessage   `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (c ContentBlock) MarshalJSON() ([]byte, error) {
	if c.Type == "text" && len(c.Annotations) == 0 && len(c.Meta) == 0 {
		// Most blocks are plain text: written by hand, the bytes
		// encoding/json would write, without its reflection.
		text, err := json.Marshal(c.Text)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(text)+len(`{"type":"text","text":}`))
		out = append(out, `{"type":"text","text":`...)
		out = append(out, text...)
		return append(out, '}'), nil
	}
	return c.marshalWire()
}

// marshalWire is the general encoding, through contentWire.
func (c ContentBlock) marshalWire() ([]byte, error) {
	w := contentWire{Type: c.Type, Annotations: c.Annotations, Meta: c.Meta}
	switch c.Type {
	case "text":
		w.Text = &c.Text
	case "image":
		w.Data, w.MimeType, w.URI = &c.Data, &c.MimeType, opt(c.URI)
	case "audio":
		w.Data, w.MimeType = &c.Data, &c.MimeType
	case "resource_link":
		w.URI, w.Name = &c.URI, &c.Name
		w.MimeType, w.Title, w.Description, w.Size = opt(c.MimeType), opt(c.Title), opt(c.Description), c.Size
	case "resource":
		if c.Resource == nil {
			return nil, fmt.Errorf("acp: resource content block without a resource")
		}
		w.Resource = c.Resource
	default:
		return nil, fmt.Errorf("acp: unknown content block type %q", c.Type)
	}
	return json.Marshal(w)
}

func (c *ContentBlock) UnmarshalJSON(b []byte) error {
	var w contentWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	*c = ContentBlock{
		Type: w.Type, Text: str(w.Text), Data: str(w.Data), MimeType: str(w.MimeType),
		URI: str(w.URI), Name: str(w.Name), Title: str(w.Title), Description: str(w.Description),
		Size: w.Size, Resource: w.Resource, Annotations: w.Annotations, Meta: w.Meta,
	}
	switch w.Type {
	case "text":
		if w.Text == nil {
			return fmt.Errorf("text content block without text")
		}
	case "image", "audio":
		if w.Data == nil || w.MimeType == nil {
			return fmt.Errorf("%s content block needs data and mimeType", w.Type)
		}
	case "resource_link":
		if w.URI == nil || w.Name == nil {
			return fmt.Errorf("resource_link content block needs uri and name")
		}
	case "resource":
		if w.Resource == nil {
			return fmt.Errorf("resource content block without a resource")
		}
	case "":
		return fmt.Errorf("content block without a type")
	default:
		return fmt.Errorf("unknown content block type %q", w.Type)
	}
	return nil
}
