package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"strings"
	"sync"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/htmlindex"
)

// converter is made once: its plugins' registration is the same for every
// page, and converting does not change it.
var mdConverter = sync.OnceValue(func() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
})

// dropped are elements that are never the content a reader asked for:
// code that runs, styles, embedded documents, controls, and the page's
// navigation.
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Svg: true, atom.Canvas: true,
	atom.Form: true, atom.Button: true, atom.Select: true, atom.Input: true, atom.Textarea: true,
	atom.Nav: true, atom.Aside: true, atom.Dialog: true, atom.Link: true, atom.Meta: true,
}

// htmlToMarkdown converts a page's main content to Markdown: the <main>
// element (or role="main", or the one <article>), else the body without
// its page-wide header and footer; scripts, styles, forms, navigation and
// hidden elements dropped; links and images kept, made absolute against
// base (the URL the page was read from). The body is decoded from the
// charset its header, BOM or <meta> names. title is the page's <title>.
func htmlToMarkdown(ctx context.Context, body []byte, contentType, base string) (title, md string, err error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return "", "", fmt.Errorf("the page's charset: %w", err)
	}
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", fmt.Errorf("the page does not parse as HTML: %w", err)
	}
	title = strings.Join(strings.Fields(textOf(find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title }))), " ")
	root := mainContent(doc)
	prune(root, root.DataAtom == atom.Body)
	out, err := mdConverter().ConvertNode(root, converter.WithDomain(base), converter.WithContext(ctx))
	if err != nil {
		return title, "", fmt.Errorf("converting the page to Markdown: %w", err)
	}
	return title, strings.TrimSpace(string(out)), nil
}

// mainContent is the element holding the page's content.
func mainContent(doc *html.Node) *html.Node {
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Main }); n != nil {
		return n
	}
	if n := find(doc, func(n *html.Node) bool { return n.Type == html.ElementNode && attr(n, "role") == "main" }); n != nil {
		return n
	}
	var articles []*html.Node
	walk(doc, func(n *html.Node) bool {
		if n.DataAtom == atom.Article {
			articles = append(articles, n)
			return false
		}
		return true
	})
	if len(articles) == 1 {
		return articles[0]
	}
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body }); n != nil {
		return n
	}
	return doc
}

// prune removes what is not content from n's subtree. chrome: n is the
// whole body, so its header and footer outside any article or main are
// the site's, not the page's.
func prune(n *html.Node, chrome bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.CommentNode || (c.Type == html.ElementNode && drop(c, chrome)) {
			n.RemoveChild(c)
		} else if c.Type == html.ElementNode {
			inner := chrome && c.DataAtom != atom.Article && c.DataAtom != atom.Main
			prune(c, inner)
		}
		c = next
	}
}

func drop(n *html.Node, chrome bool) bool {
	if dropped[n.DataAtom] {
		return true
	}
	if chrome && (n.DataAtom == atom.Header || n.DataAtom == atom.Footer) {
		return true
	}
	_, hidden := attrOK(n, "hidden")
	return hidden || attr(n, "aria-hidden") == "true"
}

// walk visits n's subtree in document order; visit returns false to skip
// a node's children.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

// find is the first node of n's subtree that match accepts.
func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	var found *html.Node
	walk(n, func(c *html.Node) bool {
		if found != nil {
			return false
		}
		if match(c) {
			found = c
			return false
		}
		return true
	})
	return found
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return true
	})
	return b.String()
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return strings.TrimSpace(strings.ToLower(a.Val)), true
		}
	}
	return "", false
}

// decodeText is a text body in UTF-8: decoded from the charset its
// Content-Type names (UTF-8 when none), bytes that are not text replaced.
func decodeText(body []byte, contentType string) string {
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if cs := params["charset"]; cs != "" && !strings.EqualFold(cs, "utf-8") {
			if enc, err := htmlindex.Get(cs); err == nil {
				if b, err := io.ReadAll(enc.NewDecoder().Reader(bytes.NewReader(body))); err == nil {
					body = b
				}
			}
		}
	}
	return strings.ToValidUTF8(strings.TrimPrefix(string(body), "\uFEFF"), "\uFFFD")
}
