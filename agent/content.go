package agent

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
)

// linkedFileMax bounds a file:// resource_link read into the context.
const linkedFileMax = 256 << 10

// promptContent flattens the prompt blocks into the text the model reads
// and the images that go with it:
//   - text as is; consecutive text blocks are separate paragraphs (a client
//     that re-sends a stopped message adds the new one as a second block,
//     and "a bit" + "Now fail" must not read "a bitNow fail");
//   - resource_link: a file:// link is read into the context (bounded);
//     other schemes are named so the model can fetch them with a tool;
//   - resource: embedded text in a <resource> element; a blob image is an
//     image, other blobs are named;
//   - image: with a model that accepts images. The capability is advertised
//     when any configured model does, so a session may be on a text-only
//     one: its images are left out (named in the text) and counted in
//     dropped, for a notice; the text still goes.
//
// m is the session's model (nil: none).
func promptContent(m *ModelChoice, blocks []acp.ContentBlock) (text string, images []int, dropped int, err error) {
	var b strings.Builder
	// images: indexes of the blocks whose image goes with the text
	acceptsImages := m != nil && m.Images
	for i, blk := range blocks {
		switch blk.Type {
		case "text":
			if i > 0 && blocks[i-1].Type == "text" {
				b.WriteString(acp.TextSeparator(b.String(), blk.Text))
			}
			b.WriteString(blk.Text)
		case "resource_link":
			b.WriteString(linkedResource(blk))
		case "resource":
			r := blk.Resource
			switch {
			case r.Text != nil:
				fmt.Fprintf(&b, "\n<resource uri=%q>\n%s\n</resource>\n", r.URI, *r.Text)
			case r.Blob != nil && strings.HasPrefix(r.MimeType, "image/") && acceptsImages:
				images = append(images, i)
				fmt.Fprintf(&b, "\n[image %q attached]\n", r.URI)
			default:
				fmt.Fprintf(&b, "\n[binary resource uri=%q mimeType=%q omitted]\n", r.URI, r.MimeType)
			}
		case "image":
			if !acceptsImages {
				fmt.Fprintf(&b, "\n[image %d left out: the model %s does not read images]\n", dropped+1, modelID(m))
				dropped++
				continue
			}
			images = append(images, i)
		default:
			return "", nil, 0, acp.InvalidParams("invalid params: prompt[%d]: %s content is not supported (this agent accepts text, resource_link, resource and, with a model that reads them, images)", i, blk.Type)
		}
	}
	if strings.TrimSpace(b.String()) == "" && len(images) == 0 {
		return "", nil, 0, acp.InvalidParams("invalid params: the prompt is empty")
	}
	return b.String(), images, dropped, nil
}

// droppedImagesNotice tells the user the model did not get their images.
func droppedImagesNotice(m *ModelChoice, n int) string {
	what := "the image was"
	if n > 1 {
		what = fmt.Sprintf("%d images were", n)
	}
	return fmt.Sprintf("The model %s does not read images, so %s left out; it got the text. Choose a model that reads images with /model.", modelID(m), what)
}

func modelID(m *ModelChoice) string {
	if m != nil {
		return m.ID
	}
	return "(none)"
}

// linkedResource renders a resource_link for the model: the file's text for
// a readable file:// link, else the link itself with why it was not read.
func linkedResource(blk acp.ContentBlock) string {
	named := fmt.Sprintf("\n[resource_link name=%q uri=%q]\n", blk.Name, blk.URI)
	u, err := url.Parse(blk.URI)
	if err != nil || u.Scheme != "file" {
		return named
	}
	path := filepath.FromSlash(u.Path)
	if !filepath.IsAbs(path) {
		return named
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("\n[resource_link name=%q uri=%q: not readable: %v]\n", blk.Name, blk.URI, err)
	}
	defer f.Close()
	buf, _ := io.ReadAll(io.LimitReader(f, linkedFileMax+1))
	n := len(buf)
	data, truncated := buf[:min(n, linkedFileMax)], n > linkedFileMax
	if !utf8.Valid(trimPartialRune(data)) || strings.ContainsRune(string(data), 0) {
		return fmt.Sprintf("\n[resource_link name=%q uri=%q: binary file, not included]\n", blk.Name, blk.URI)
	}
	note := ""
	if truncated {
		data = trimPartialRune(data)
		note = fmt.Sprintf(" truncated=\"first %d KiB\"", linkedFileMax>>10)
	}
	return fmt.Sprintf("\n<resource uri=%q path=%q%s>\n%s\n</resource>\n", blk.URI, path, note, data)
}

// trimPartialRune drops an incomplete UTF-8 sequence cut off at the end.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[len(b)-1-i]) {
			if !utf8.FullRune(b[len(b)-1-i:]) {
				return b[:len(b)-1-i]
			}
			break
		}
	}
	return b
}

// promptImages are the images a logged prompt gave the model: the blocks
// UserMessage.Images names, from the blocks as received live or decoded
// once on load (session.WithBlocks).
func promptImages(m session.UserMessage) []model.Image {
	if len(m.Images) == 0 {
		return nil
	}
	blocks, ok := m.PromptBlocks()
	if !ok {
		return nil
	}
	var out []model.Image
	for _, i := range m.Images {
		if i < 0 || i >= len(blocks) {
			continue
		}
		switch b := blocks[i]; {
		case b.Type == "image":
			out = append(out, model.Image{MimeType: b.MimeType, Data: b.Data})
		case b.Type == "resource" && b.Resource != nil && b.Resource.Blob != nil:
			out = append(out, model.Image{MimeType: b.Resource.MimeType, Data: *b.Resource.Blob})
		}
	}
	return out
}
