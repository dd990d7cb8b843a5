package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/net/html"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/rules"
)

// Search is the service web_search asks: a SearxNG instance (any endpoint
// answering SearxNG's JSON), else the Brave Search API.
type Search struct {
	// SearxNG is the instance's base URL; its /search is asked with
	// format=json, which its settings.yml must list in search.formats.
	SearxNG string
	// BraveKey is a Brave Search API key (X-Subscription-Token).
	BraveKey string
	// BraveURL is the Brave endpoint; "": BraveAPI.
	BraveURL string
}

// BraveAPI is the Brave Search API's web search endpoint.
const BraveAPI = "https://api.search.brave.com/res/v1/web/search"

// Limits of one search.
const (
	searchTimeout    = 20 * time.Second
	searchMaxBody    = 2 << 20
	searchDefault    = 10
	searchMaxResults = 20
	snippetMax       = 400 // characters of a snippet
)

// CodeSearchFailed: the search service failed or answered what is not a
// result list.
const CodeSearchFailed = "WEB_SEARCH_FAILED"

type searchArgs struct {
	Query string `json:"query" jsonschema:"What to search the web for"`
	Count int    `json:"count,omitempty" jsonschema:"How many results (default 10, at most 20)"`
}

// Results is what web_search returns.
type Results struct {
	Query   string   `json:"query"`
	Results []Result `json:"results"`
}

// Result is one search result.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// endpoint is the service's URL, host and name.
func (s *Search) endpoint() (*url.URL, string, error) {
	raw, name := s.SearxNG, "SearxNG"
	if raw == "" {
		raw, name = s.BraveURL, "Brave Search"
		if raw == "" {
			raw = BraveAPI
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, name, fmt.Errorf("the %s URL %q is not an http(s) URL", name, raw)
	}
	if s.SearxNG != "" && !strings.HasSuffix(u.Path, "/search") {
		u = u.JoinPath("search")
	}
	return u, name, nil
}

func searchTool(o *Options) registry.Tool[searchArgs, Results] {
	_, name, _ := o.Search.endpoint()
	return registry.Tool[searchArgs, Results]{
		Name:  "web_search",
		Facts: registry.Facts{ReadOnly: true, Kind: "search"},
		Description: "Search the web (" + name + "). Returns up to 10 results (count: at most 20), each a title, a URL and a snippet; " +
			"read a result with web_fetch.",
		Schema: func(s *jsonschema.Schema) {
			s.Properties["query"].MinLength = jsonschema.Ptr(1)
			s.Properties["query"].MaxLength = jsonschema.Ptr(400)
			s.Properties["count"].Minimum = jsonschema.Ptr(1.0)
			s.Properties["count"].Maximum = jsonschema.Ptr(float64(searchMaxResults))
		},
		Run: func(ctx context.Context, c *registry.Call, in searchArgs) (Results, error) {
			return runSearch(ctx, o, in)
		},
		Render:          renderResults,
		ConcurrencySafe: func(searchArgs) bool { return true },
		Timeout:         searchTimeout + 5*time.Second,
		Permission: func(_ *registry.Call, in searchArgs) *registry.Permission {
			// The query leaves the machine: asked, as a fetch is.
			return &registry.Permission{Reason: "search the web (" + name + ") for " + shorten(in.Query, 200),
				Key: "web_search", Subject: "web searches", Rule: "WebSearch"}
		},
		PresentCall: func(in searchArgs) registry.View {
			return registry.GenericCard{Title: "Search the web: " + shorten(in.Query, 120), Kind: "search"}
		},
		PresentResult: func(in searchArgs, r registry.Result) registry.View {
			if r.IsError {
				return nil
			}
			return registry.GenericCard{Title: "Search the web: " + shorten(in.Query, 120), Kind: "search",
				Content: []registry.Content{registry.Text(r.Text())}}
		},
	}
}

// Probe asks the configured service one query, as web_search would (what
// acp-bridge doctor checks): the results, or why there are none.
func Probe(ctx context.Context, o *Options, query string) (Results, error) {
	if o == nil || o.Search == nil {
		return Results{}, errors.New("no search service is configured")
	}
	return runSearch(ctx, o, searchArgs{Query: query})
}

// Name is the configured service's name and URL, for messages.
func (s *Search) Name() string {
	u, name, err := s.endpoint()
	if err != nil {
		return name
	}
	u.RawQuery = ""
	return name + " at " + u.String()
}

func runSearch(ctx context.Context, o *Options, in searchArgs) (Results, error) {
	u, name, err := o.Search.endpoint()
	if err != nil {
		return Results{}, registry.Errorf(CodeSearchFailed, err.Error())
	}
	count := in.Count
	if count <= 0 {
		count = searchDefault
	}
	count = min(count, searchMaxResults)
	q := u.Query()
	q.Set("q", in.Query)
	brave := o.Search.SearxNG == ""
	if brave {
		q.Set("count", fmt.Sprint(count))
		q.Set("text_decorations", "false")
	} else {
		q.Set("format", "json")
	}
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	// The service is the user's own configuration: its host is open to the
	// guard (a SearxNG on localhost), and nothing else is reached: no
	// redirect is followed.
	host := rules.Domain(u.String())
	cl := client(o, func(h string) bool { return rules.Host(h) == host }, searchTimeout,
		func(*http.Request, []*http.Request) error {
			return errors.New("the search service redirected; no redirect is followed")
		})
	defer cl.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Results{}, registry.Errorf(CodeSearchFailed, err.Error())
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	if brave {
		req.Header.Set("X-Subscription-Token", o.Search.BraveKey)
	}
	resp, err := cl.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL carries the query and, for Brave, nothing secret; said once
		}
		return Results{}, registry.Errorf(CodeSearchFailed, fmt.Sprintf("%s at %s: %v", name, u.Host, err))
	}
	defer resp.Body.Close()
	body, err := readCapped(resp.Body, searchMaxBody)
	if err != nil {
		return Results{}, registry.Errorf(CodeSearchFailed, fmt.Sprintf("%s's answer: %v (at most %s is read)", name, err, size(searchMaxBody)))
	}
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("%s answered %s", name, resp.Status)
		if !brave && resp.StatusCode == http.StatusForbidden {
			msg += ": the instance does not serve JSON; add json to search.formats in its settings.yml"
		}
		return Results{}, registry.Errorf(CodeSearchFailed, msg)
	}
	var rs []Result
	if brave {
		rs, err = braveResults(body)
	} else {
		rs, err = searxResults(body)
	}
	if err != nil {
		return Results{}, registry.Errorf(CodeSearchFailed, fmt.Sprintf("%s's answer is not a result list: %v", name, err))
	}
	out := Results{Query: in.Query, Results: []Result{}}
	for _, r := range rs {
		if len(out.Results) == count {
			break
		}
		if pu, err := url.Parse(r.URL); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
			continue
		}
		r.Title = oneLine(r.Title, 200)
		r.Snippet = oneLine(plain(r.Snippet), snippetMax)
		out.Results = append(out.Results, r)
	}
	return out, nil
}

func searxResults(body []byte) ([]Result, error) {
	var a struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, err
	}
	rs := make([]Result, 0, len(a.Results))
	for _, r := range a.Results {
		rs = append(rs, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return rs, nil
}

func braveResults(body []byte) ([]Result, error) {
	var a struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, err
	}
	rs := make([]Result, 0, len(a.Web.Results))
	for _, r := range a.Web.Results {
		rs = append(rs, Result{Title: r.Title, URL: r.URL, Snippet: r.Description})
	}
	return rs, nil
}

// plain is a snippet's text without the markup some services put in it.
func plain(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	n, err := html.Parse(strings.NewReader(s))
	if err != nil {
		return s
	}
	return textOf(n)
}

func oneLine(s string, n int) string { return shorten(strings.Join(strings.Fields(s), " "), n) }

func renderResults(_ searchArgs, r Results) []registry.Content {
	if len(r.Results) == 0 {
		return []registry.Content{registry.Text(fmt.Sprintf("No results for %q.", r.Query))}
	}
	var b strings.Builder
	for i, x := range r.Results {
		fmt.Fprintf(&b, "%d. [%s](%s)\n", i+1, x.Title, x.URL)
		if x.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", x.Snippet)
		}
	}
	return []registry.Content{registry.Text(strings.TrimRight(b.String(), "\n"))}
}
