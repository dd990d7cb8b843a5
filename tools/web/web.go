// Package web holds the web tools, one per file: web_fetch reads a page
// (HTML as Markdown), web_search asks a configured search service. Both
// reach the network only through internal/netguard's dialer, which refuses
// the user's own network (loopback, private, link-local, metadata
// addresses, ports other than 80 and 443) unless the user's own rule names
// the host. They declare their facts (read-only, kind fetch or search) and
// name the domain of a call for the permission rules (rules.Domain), so
// `WebFetch(domain:docs.python.org)` allows a domain and a deny rule
// refuses one in every mode.
package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/netguard"
	"github.com/acp-bridge/acp-bridge/registry"
)

// Options configure the web tools.
type Options struct {
	// Search is the search service; nil: web_search is not offered.
	Search *Search
	// Guard configures the dialer (tests: a resolver, a proxy, TLS roots).
	Guard netguard.Options
}

// Register adds web_fetch, and web_search when a search service is
// configured.
func Register(r *registry.Registry, o *Options) {
	if o == nil {
		o = &Options{}
	}
	registry.MustAdd(r, fetchTool(o))
	if o.Search != nil {
		registry.MustAdd(r, searchTool(o))
	}
}

// userAgent names the bridge to the sites it reads.
const userAgent = "acp-bridge (web_fetch; +https://github.com/acp-bridge/acp-bridge)"

// errTooLarge marks a body cut at its cap.
var errTooLarge = errors.New("body larger than the cap")

// readCapped reads at most limit bytes of r; a longer body returns the
// first limit bytes and errTooLarge.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > limit {
		return b[:limit], errTooLarge
	}
	return b, nil
}

// size says a byte count the way a person reads it.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// client is an HTTP client through a fresh guard (one per call: see
// netguard.Guard), bounded in time as a whole.
func client(o *Options, open func(host string) bool, timeout time.Duration,
	redirect func(req *http.Request, via []*http.Request) error) *http.Client {
	return &http.Client{Transport: netguard.New(o.Guard, open).Transport(), CheckRedirect: redirect, Timeout: timeout}
}
