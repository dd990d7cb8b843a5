package remote

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// guard is the check every request and upgrade passes before anything
// else looks at it. The order is Host, Origin, token: a DNS-rebinding
// page (a foreign Host) or a foreign site's script (a foreign Origin) is
// refused before it learns whether a token is needed.
//
// Nothing it refuses is logged with a header's value: an Authorization
// header holds the secret, and the others are the attacker's text.
type guard struct {
	hosts           map[string]bool // lower-case host names and IPs, no port
	origins         map[string]bool // "scheme://host[:port]", lower case
	loopbackOrigins bool
	token           [32]byte // SHA-256 of the token; compared in constant time
	needToken       bool
}

func newGuard(o Options) (*guard, error) {
	g := &guard{hosts: map[string]bool{}, origins: map[string]bool{}, loopbackOrigins: o.LoopbackOrigins}
	for _, h := range loopbackHosts {
		g.hosts[h] = true
	}
	for _, h := range o.Hosts {
		h = normalHost(h)
		if h == "" || strings.ContainsAny(h, "/:@ ") && net.ParseIP(h) == nil {
			return nil, errors.New("remote: a host must be a name or an IP without a port, not " + h)
		}
		g.hosts[h] = true
	}
	for _, o := range o.Origins {
		n, ok := normalOrigin(o)
		if !ok {
			return nil, errors.New("remote: an origin is scheme://host[:port], not " + o)
		}
		g.origins[n] = true
	}
	if o.Token != "" {
		g.token, g.needToken = sha256.Sum256([]byte(o.Token)), true
	}
	return g, nil
}

// check answers a refused request (403, 401) or a CORS preflight itself
// and returns false; true lets the request through.
func (g *guard) check(w http.ResponseWriter, r *http.Request) bool {
	if !g.hostAllowed(r.Host) {
		httpError(w, http.StatusForbidden, "forbidden: Host not allowed")
		return false
	}
	origin, hasOrigin := r.Header["Origin"]
	if hasOrigin {
		if len(origin) != 1 || !g.originAllowed(origin[0]) {
			httpError(w, http.StatusForbidden, "forbidden: Origin not allowed")
			return false
		}
		// An allowed browser origin may read the answers and the ACP
		// headers; nothing is allowed to any other.
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin[0])
		h.Set("Access-Control-Expose-Headers", HeaderConnectionID+", "+HeaderSessionID)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, "+HeaderConnectionID+", "+HeaderSessionID)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return false
		}
	}
	// /health says only whether the server is up: load balancers and
	// probes ask it without the secret.
	if g.needToken && r.URL.Path != "/health" && !g.tokenOK(r.Header.Values("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="acp-bridge"`)
		httpError(w, http.StatusUnauthorized, "unauthorized: a bearer token is required")
		return false
	}
	return true
}

func (g *guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = normalHost(host)
	return host != "" && g.hosts[host]
}

// loopbackHosts are always allowed as Host and, with LoopbackOrigins, as
// the host of an Origin.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// normalHost is h without IPv6 brackets or a trailing dot, in lower case.
func normalHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
}

func (g *guard) originAllowed(o string) bool {
	n, ok := normalOrigin(o)
	if !ok {
		return false // "null" (a sandboxed frame, a file:) among others
	}
	if g.origins[n] {
		return true
	}
	if !g.loopbackOrigins {
		return false
	}
	u, _ := url.Parse(n)
	return slices.Contains(loopbackHosts, strings.ToLower(u.Hostname()))
}

// normalOrigin is o as scheme://host[:port] in lower case, if it is one.
func normalOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// tokenOK compares the bearer token in constant time: the hashes have one
// length whatever was sent, so neither the content nor the length of the
// token leaks through timing.
func (g *guard) tokenOK(values []string) bool {
	if len(values) != 1 {
		return false
	}
	scheme, tok, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], g.token[:]) == 1
}
