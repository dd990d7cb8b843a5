package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/acp-bridge/acp-bridge/internal/netguard"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/rules"
)

// Limits of one fetch.
const (
	fetchMaxBody    = 5 << 20          // bytes of body read (decoded), the rest cut
	fetchTimeout    = 30 * time.Second // the whole fetch: connections, redirects, body
	upgradeTimeout  = 5 * time.Second  // connecting for the https attempt of an http URL
	fetchMaxHops    = 10               // redirects followed
	fetchMaxURL     = 2000             // characters of a URL
	fetchCacheTTL   = 15 * time.Minute // a page is kept this long for the session
	windowMaxLines  = 2000             // lines the model reads per call, as read
	windowMaxBytes  = 50 * 1024        // bytes the model reads per call, as read
	lineMaxBytes    = 4000             // longer lines (minified JSON) are wrapped
	outlineMaxItems = 60               // headings listed for a page longer than a window
)

// Failure codes of web_fetch.
const (
	// CodeRefused: the URL, an address it resolves to, or a redirect is
	// one web_fetch does not reach; nothing was requested from it.
	CodeRefused = "WEB_REFUSED"
	// CodeFetchFailed: the request failed (DNS, connection, TLS, time).
	CodeFetchFailed = "WEB_FETCH_FAILED"
	// CodeHTTPStatus: the server answered with an error status.
	CodeHTTPStatus = "WEB_HTTP_STATUS"
	// CodeUnsupportedType: the body is of a type web_fetch does not read.
	CodeUnsupportedType = "WEB_UNSUPPORTED_TYPE"
)

type fetchArgs struct {
	URL    string `json:"url" jsonschema:"The http or https URL to read (http is tried over https first)"`
	Prompt string `json:"prompt,omitempty" jsonschema:"What you are looking for on the page, shown to the user with the call"`
	Offset int    `json:"offset,omitempty" jsonschema:"The 1-based line of the page's text to start from, to continue a long page"`
}

// Page is what web_fetch returns: one window of the page's text.
type Page struct {
	URL   string `json:"url"` // the URL read, after the redirects followed
	Title string `json:"title,omitempty"`
	Type  string `json:"type"` // the media type
	// Redirect is a redirect to another host that was not followed: call
	// web_fetch with it (its own permission, its own rules).
	Redirect string `json:"redirect,omitempty"`
	Note     string `json:"note,omitempty"` // a cut body
	Content  string `json:"content"`        // lines Offset..Offset+len-1 of the page's text
	Offset   int    `json:"offset"`
	Lines    int    `json:"lines"`                 // lines of the whole text
	Next     int    `json:"next_offset,omitempty"` // where to continue; 0 at the end
	// Outline is the page's headings ("line 12: ## Install"), for a page
	// longer than one window.
	Outline []string `json:"outline,omitempty"`
}

// document is a fetched page as the session's memo keeps it: every line
// of its text, so a later call with another offset costs no request.
type document struct {
	URL, Title, Type, Redirect, Note string
	Lines                            []string
	Outline                          []heading
	// Hosts are the hosts after the first that redirects led to, and
	// whether the user's own rule opened each.
	Hosts map[string]bool
}

type heading struct {
	Line int
	Text string
}

func fetchTool(o *Options) registry.Tool[fetchArgs, Page] {
	return registry.Tool[fetchArgs, Page]{
		Name:  "web_fetch",
		Facts: registry.Facts{ReadOnly: true, Kind: "fetch"},
		Description: "Read a web page: GET an http(s) URL; HTML comes back as Markdown (the main content, links kept), " +
			"text and JSON as they are. Reads at most 2000 lines and 50 KiB per call; use offset to continue a long page. " +
			"Pages are kept for 15 minutes, so paging costs no new request. Loopback, private and link-local addresses, " +
			"ports other than 80 and 443, and URLs with credentials are refused unless the user's rules allow the host. " +
			"A redirect to another host is not followed: the result names it, fetch it with another call.",
		Schema: func(s *jsonschema.Schema) {
			s.Properties["url"].MinLength = jsonschema.Ptr(1)
			s.Properties["url"].MaxLength = jsonschema.Ptr(fetchMaxURL)
			s.Properties["offset"].Minimum = jsonschema.Ptr(1.0)
		},
		Run: func(ctx context.Context, c *registry.Call, in fetchArgs) (Page, error) {
			return runFetch(ctx, o, c, in)
		},
		Render:          renderPage,
		ConcurrencySafe: func(fetchArgs) bool { return true },
		Timeout:         fetchTimeout + 10*time.Second,
		Permission:      fetchPermission,
		PresentCall: func(in fetchArgs) registry.View {
			card := registry.GenericCard{Title: "Fetch " + in.URL, Kind: "fetch"}
			if p := strings.TrimSpace(in.Prompt); p != "" {
				card.Content = []registry.Content{registry.Text(p)}
			}
			return card
		},
		PresentResult: func(in fetchArgs, r registry.Result) registry.View {
			if r.IsError {
				return nil // the generic card shows the error text
			}
			return registry.GenericCard{Title: "Fetch " + in.URL, Kind: "fetch",
				Content: []registry.Content{registry.Text(registry.ContentSection(r.Text()))}}
		},
	}
}

// fetchPermission asks about every fetch, naming the domain: "Always
// allow" remembers the domain as a rule, `WebFetch(domain:HOST)`. A URL
// the body will refuse whatever the answer (a scheme, credentials, a
// private address or port no rule opens) is not asked about: the body
// refuses it, before any request, with its reason.
func fetchPermission(c *registry.Call, in fetchArgs) *registry.Permission {
	host := rules.Domain(in.URL)
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if host == "" || err != nil || checkURL(u) != nil {
		return nil
	}
	v := verdict(c, u.String())
	if precheck(u, host, v.Effect == string(rules.Allow) && v.Written) != nil {
		return nil
	}
	p := &registry.Permission{Reason: "fetch " + shorten(in.URL, 200) + " from " + host,
		Key: "web_fetch:" + host, Subject: "fetches from `" + host + "`", Rule: "WebFetch(domain:" + host + ")"}
	if utf8.RuneCountInString(p.Subject) > 44 {
		p.Subject = "fetches from this domain"
	}
	return p
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func refused(format string, args ...any) error {
	return registry.Errorf(CodeRefused, fmt.Sprintf(format, args...))
}

// checkURL refuses what web_fetch never requests, whatever the rules:
// schemes other than http and https, credentials, no host, an over-long URL.
func checkURL(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		if u.Scheme == "" {
			return refused("%q is not a URL: give an http:// or https:// URL", u.String())
		}
		return refused("%s: web_fetch reads http and https URLs only, not %s:", shorten(u.String(), 200), u.Scheme)
	case u.User != nil:
		return refused("%s has credentials in it (user:password@): web_fetch does not send credentials", u.Redacted())
	case u.Host == "" || rules.Domain(u.String()) == "":
		return refused("%q names no host web_fetch can reach", u.String())
	case hostRefusal(u) != "":
		return refused("%s: the host %q is %s", shorten(u.String(), 200), u.Hostname(), hostRefusal(u))
	case len(u.String()) > fetchMaxURL:
		return refused("the URL is longer than %d characters", fetchMaxURL)
	case u.Port() != "" && !validPort(u.Port()):
		return refused("%q is not a port", u.Port())
	}
	return nil
}

// hostRefusal is netguard.HostRefusal of u's host as written and as the
// transport will ask for it (IDNA maps fullwidth digits to ASCII ones).
func hostRefusal(u *url.URL) string {
	if why := netguard.HostRefusal(u.Hostname()); why != "" {
		return why
	}
	return netguard.HostRefusal(rules.Domain(u.String()))
}

func validPort(p string) bool {
	n, err := netip.ParseAddrPort("0.0.0.0:" + p)
	return err == nil && n.Port() != 0
}

func port(u *url.URL) uint16 {
	if p := u.Port(); p != "" {
		ap, _ := netip.ParseAddrPort("0.0.0.0:" + p)
		return ap.Port()
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// verdict is what the session's rules say of fetching raw.
func verdict(c *registry.Call, raw string) registry.RuleVerdict {
	if c == nil || c.Rules == nil {
		return registry.RuleVerdict{}
	}
	args, _ := json.Marshal(map[string]string{"url": raw})
	return c.Rules.CheckRule("web_fetch", args)
}

// precheck refuses, before any request, a host that is not open and is an
// address the guard refuses, or a port it refuses: the reason is clearer
// than the dialer's, and says which rule would open it.
func precheck(u *url.URL, host string, open bool) error {
	if open {
		return nil
	}
	hint := fmt.Sprintf("; if you mean it, the user can allow it with the rule WebFetch(domain:%s) in their config file", host)
	if a, err := netip.ParseAddr(host); err == nil {
		if why := netguard.Refusal(a); why != "" {
			return refused("%s: %s is %s, which web_fetch does not reach%s", shorten(u.String(), 200), host, why, hint)
		}
	}
	if p := port(u); !netguard.Port(p) {
		return refused("%s: port %d is neither 80 nor 443, which web_fetch does not reach%s", shorten(u.String(), 200), p, hint)
	}
	return nil
}

func runFetch(ctx context.Context, o *Options, c *registry.Call, in fetchArgs) (Page, error) {
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil {
		return Page{}, refused("%q is not a URL: %v", in.URL, err)
	}
	if err := checkURL(u); err != nil {
		return Page{}, err
	}
	host := rules.Domain(u.String())
	v := verdict(c, u.String())
	if v.Effect == string(rules.Deny) {
		return Page{}, refused("%s: the %s refuses it", shorten(u.String(), 200), v.Rule)
	}
	open := v.Effect == string(rules.Allow) && v.Written
	if err := precheck(u, host, open); err != nil {
		return Page{}, err
	}
	key := fmt.Sprintf("web_fetch %t %s", open, u.String())
	if x, ok := c.Memo.Get(key); ok {
		if d := x.(*document); stillAllowed(c, d) {
			return d.window(in.Offset)
		}
	}
	d, err := fetch(ctx, o, c, u, host, open)
	if err != nil {
		return Page{}, err
	}
	n := 0
	for _, l := range d.Lines {
		n += len(l) + 1
	}
	c.Memo.Put(key, d, n, fetchCacheTTL)
	return d.window(in.Offset)
}

// stillAllowed: a kept page whose redirects led to other hosts is used
// only while the rules still say of each what they said when it was
// fetched (allowed, and opened or not).
func stillAllowed(c *registry.Call, d *document) bool {
	for h, opened := range d.Hosts {
		v := verdict(c, "https://"+h+"/")
		if v.Effect != string(rules.Allow) || v.Written != opened {
			return false
		}
	}
	return true
}

// hosts are the hosts one fetch may reach at any address and port: those
// the user's own rules name. Redirects add to it while dials read it.
type hosts struct {
	mu   sync.Mutex
	open map[string]bool
}

func (h *hosts) is(host string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open[rules.Host(host)]
}

func (h *hosts) add(host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open[host] = true
}

// fetch requests u (over https first when it is an http URL the host may
// also serve over TLS), follows redirects within the rules, and turns the
// body into text.
func fetch(ctx context.Context, o *Options, c *registry.Call, u *url.URL, host string, open bool) (*document, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	opened := &hosts{open: map[string]bool{}}
	if open {
		opened.add(host)
	}
	d := &document{}
	redirect := func(req *http.Request, via []*http.Request) error {
		return d.follow(c, opened, req, via)
	}
	if u.Scheme == "http" && u.Port() == "" {
		up := *u
		up.Scheme = "https"
		g := *o
		g.Guard.DialTimeout = upgradeTimeout
		cl := client(&g, opened.is, fetchTimeout, redirect)
		resp, err := get(ctx, cl, &up)
		if err == nil {
			defer cl.CloseIdleConnections()
			return d.read(ctx, resp)
		}
		cl.CloseIdleConnections()
		// A refusal or a cancel is final; a host that does not serve TLS
		// (refused, reset, a bad certificate) is asked over http.
		if _, ok := netguard.Refused(err); ok || ctx.Err() != nil || isRefusal(err) {
			return nil, failure(u, err)
		}
		d.Hosts, d.Redirect = nil, ""
	}
	cl := client(o, opened.is, fetchTimeout, redirect)
	defer cl.CloseIdleConnections()
	resp, err := get(ctx, cl, u)
	if err != nil {
		return nil, failure(u, err)
	}
	return d.read(ctx, resp)
}

func get(ctx context.Context, cl *http.Client, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.1")
	return cl.Do(req)
}

// isRefusal: a redirect check's refusal (a registry error) came back
// through the client.
func isRefusal(err error) bool {
	var re *registry.Error
	return errors.As(err, &re)
}

// failure is a failed request as the model reads it.
func failure(u *url.URL, err error) error {
	var re *registry.Error
	if errors.As(err, &re) {
		return re
	}
	if r, ok := netguard.Refused(err); ok {
		return refused("%s: %v, which web_fetch does not reach; nothing was requested from it. If you mean it, the user can allow the host with the rule WebFetch(domain:%s) in their config file",
			shorten(u.String(), 200), r, rules.Host(r.Host))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return registry.Errorf(CodeFetchFailed, fmt.Sprintf("%s: no answer within the time limit (%s for the whole fetch)", shorten(u.String(), 200), fetchTimeout))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return registry.Errorf(CodeFetchFailed, fmt.Sprintf("%s: %v", shorten(u.String(), 200), err))
}

// follow decides one redirect: refused when the URL or the rules refuse
// it; not followed when it leads to another host no rule allows (the
// model fetches it with a call of its own, asked about like any other);
// else followed, the connection checked by the guard again.
func (d *document) follow(c *registry.Call, opened *hosts, req *http.Request, via []*http.Request) error {
	if len(via) >= fetchMaxHops {
		return refused("stopped after %d redirects (at %s)", fetchMaxHops, shorten(req.URL.String(), 200))
	}
	next := req.URL
	if err := checkURL(next); err != nil {
		return refused("the redirect to %s is refused: %v", shorten(next.Redacted(), 200), err)
	}
	host := rules.Domain(next.String())
	v := verdict(c, next.String())
	if v.Effect == string(rules.Deny) {
		return refused("the redirect to %s is refused: the %s refuses it", shorten(next.String(), 200), v.Rule)
	}
	if v.Effect == string(rules.Allow) && v.Written {
		opened.add(host)
	}
	if err := precheck(next, host, opened.is(host)); err != nil {
		return refused("the redirect from %s is refused: %v", shorten(via[len(via)-1].URL.String(), 200), err)
	}
	if host != rules.Domain(via[len(via)-1].URL.String()) {
		if v.Effect != string(rules.Allow) {
			d.Redirect = next.String()
			return http.ErrUseLastResponse
		}
		if d.Hosts == nil {
			d.Hosts = map[string]bool{}
		}
		d.Hosts[host] = v.Written
	}
	return nil
}

// read turns a response into the document: a redirect not followed, an
// error status, a type it does not read (refused before its body is read),
// or the body as text, cut at fetchMaxBody.
func (d *document) read(ctx context.Context, resp *http.Response) (*document, error) {
	defer resp.Body.Close()
	d.URL = resp.Request.URL.String()
	if d.Redirect != "" {
		d.Type = "redirect"
		return d, nil
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("%s answered %s", d.URL, resp.Status)
		if kind(mt) != "" {
			if b, _ := readCapped(resp.Body, 2048); len(b) > 0 {
				msg += ": " + strings.TrimSpace(decodeText(b, ct))
			}
		}
		return nil, registry.Errorf(CodeHTTPStatus, msg)
	}
	if mt == "" {
		// No type said: sniff the first bytes, as a browser would.
		head := make([]byte, 512)
		n, _ := io.ReadFull(resp.Body, head)
		head = head[:n]
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(head))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	}
	k := kind(mt)
	if k == "" {
		return nil, registry.Errorf(CodeUnsupportedType, fmt.Sprintf("%s is %s, which web_fetch does not read (it reads HTML, text and JSON); nothing of it was read", d.URL, mt))
	}
	d.Type = mt
	body, err := readCapped(resp.Body, fetchMaxBody)
	switch {
	case errors.Is(err, errTooLarge):
		d.Note = fmt.Sprintf("the page was cut: only its first %s were read", size(fetchMaxBody))
		if resp.ContentLength > 0 {
			d.Note += fmt.Sprintf(" of %s", size(resp.ContentLength))
		}
	case err != nil:
		return nil, failure(resp.Request.URL, err)
	}
	text := ""
	if k == "html" {
		var title string
		title, text, err = htmlToMarkdown(ctx, body, ct, d.URL)
		if err != nil {
			return nil, registry.Errorf(CodeFetchFailed, fmt.Sprintf("%s: %v", d.URL, err))
		}
		d.Title = title
	} else {
		text = decodeText(body, ct)
	}
	d.Lines = splitLines(text)
	if k == "html" || mt == "text/markdown" {
		d.Outline = outline(d.Lines)
	}
	return d, nil
}

// kind is how a media type is read: "html" (as Markdown), "text" (as it
// is), "" not at all.
func kind(mt string) string {
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "html"
	case strings.HasPrefix(mt, "text/"), mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"), mt == "application/javascript",
		mt == "application/x-ndjson", mt == "application/yaml", mt == "application/toml":
		return "text"
	}
	return ""
}

// splitLines cuts text into lines, wrapping lines longer than lineMaxBytes
// at a rune boundary, so that every window holds whole lines.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n"), "\n") {
		for len(l) > lineMaxBytes {
			cut := lineMaxBytes
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			out = append(out, l[:cut])
			l = l[cut:]
		}
		out = append(out, l)
	}
	return out
}

// outline lists the Markdown headings outside code blocks with their line.
func outline(lines []string) []heading {
	var hs []heading
	fenced := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if !fenced && strings.HasPrefix(t, "#") {
			hs = append(hs, heading{Line: i + 1, Text: shorten(t, 120)})
		}
	}
	return hs
}

// window is the part of the document one call shows, from offset.
func (d *document) window(offset int) (Page, error) {
	p := Page{URL: d.URL, Title: d.Title, Type: d.Type, Redirect: d.Redirect, Note: d.Note, Lines: len(d.Lines)}
	if d.Redirect != "" {
		return p, nil
	}
	w, ok := registry.PageLines(len(d.Lines), offset, windowMaxLines, windowMaxBytes, func(i int) string { return d.Lines[i] + "\n" })
	if !ok {
		return Page{}, registry.Errorf("WEB_BAD_OFFSET", fmt.Sprintf("offset %d is beyond the end of the page (%d lines)", offset, len(d.Lines)))
	}
	p.Content, p.Offset, p.Next = w.Text, w.First, w.Next()
	if p.Next > 0 || p.Offset > 1 {
		for _, h := range d.Outline[:min(len(d.Outline), outlineMaxItems)] {
			p.Outline = append(p.Outline, fmt.Sprintf("line %d: %s", h.Line, h.Text))
		}
		if len(d.Outline) > outlineMaxItems {
			p.Outline = append(p.Outline, fmt.Sprintf("(and %d more headings)", len(d.Outline)-outlineMaxItems))
		}
	}
	return p, nil
}

// renderPage is what the model reads: where the text came from, the
// window in <content>, how to continue, and for a page longer than one
// window its headings by line.
func renderPage(in fetchArgs, p Page) []registry.Content {
	var b strings.Builder
	if p.Redirect != "" {
		fmt.Fprintf(&b, "%s redirects to %s, another host, which was not followed. To read it, call web_fetch with that URL.", p.URL, p.Redirect)
		return []registry.Content{registry.Text(b.String())}
	}
	fmt.Fprintf(&b, "<url>%s</url>\n", p.URL)
	if p.Title != "" {
		fmt.Fprintf(&b, "<title>%s</title>\n", p.Title)
	}
	how := "as it is"
	if kind(p.Type) == "html" {
		how = "converted to Markdown"
	}
	fmt.Fprintf(&b, "<type>%s, %s</type>\n", p.Type, how)
	if p.Note != "" {
		fmt.Fprintf(&b, "<note>%s</note>\n", p.Note)
	}
	fmt.Fprintf(&b, "<content>\n%s</content>\n", p.Content)
	last := p.Offset + strings.Count(p.Content, "\n") - 1
	switch {
	case p.Lines == 0:
		b.WriteString("(The page has no text.)")
	case p.Next > 0:
		b.WriteString("(" + registry.ShowingLines(p.Offset, last, p.Lines) + ")")
	default:
		fmt.Fprintf(&b, "(End of page - lines %d-%d of %d.)", p.Offset, last, p.Lines)
	}
	if len(p.Outline) > 0 {
		b.WriteString("\nThe page's headings, to choose an offset:\n")
		for _, h := range p.Outline {
			b.WriteString("  " + h + "\n")
		}
	}
	return []registry.Content{registry.Text(b.String())}
}
