package rules

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// The web tools' rules: `WebFetch(domain:docs.python.org)` names a host
// (and its subdomains), `WebFetch(domain:*.python.org)` only the
// subdomains, `WebFetch` every fetch; `WebSearch` every search. The tool
// names web_fetch and web_search are accepted as well.

// webTools maps the rule names of the web tools to their tool names.
var webTools = map[string]string{"webfetch": "web_fetch", "websearch": "web_search"}

// Domain is the host a URL names, as rules match it and as web_fetch
// connects to it: lower case, without a trailing dot, an international
// name in its ASCII form (punycode, as net/http dials it), an IP literal
// without brackets. "" when raw has no host or the host cannot be put in
// ASCII: web_fetch refuses such a URL, so no rule is needed to.
func Domain(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return Host(u.Hostname())
}

// Host normalises a host name as Domain does.
func Host(h string) string {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" {
		return ""
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.String()
	}
	a, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return ""
	}
	return a
}

// domainPattern checks and normalises a WebFetch pattern: `domain:HOST`
// or `domain:*.HOST`.
func domainPattern(p string) (string, error) {
	host, ok := strings.CutPrefix(p, "domain:")
	if !ok {
		return "", fmt.Errorf("a WebFetch pattern is domain:HOST, e.g. WebFetch(domain:docs.python.org)")
	}
	host = strings.TrimSpace(host)
	sub := strings.HasPrefix(host, "*.")
	if sub {
		host = host[2:]
	}
	if strings.Contains(host, "*") {
		return "", fmt.Errorf("%q: only a leading *. is a wildcard (all subdomains); leave out the parentheses to match every domain", p)
	}
	if _, err := netip.ParseAddr(host); err != nil && strings.ContainsAny(host, "/:@?#[]\\ ") {
		return "", fmt.Errorf("%q: name a host only, without scheme, port or path", p)
	}
	n := Host(host)
	if n == "" {
		return "", fmt.Errorf("%q is not a host name", p)
	}
	if sub {
		n = "*." + n
	}
	return n, nil
}

// matchesDomain: a host matches `example.com` when it is that host or one
// of its subdomains, `*.example.com` when it is a subdomain; an IP literal
// matches only itself.
func matchesDomain(pattern, host string) bool {
	if host == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	if _, err := netip.ParseAddr(pattern); err == nil {
		return host == pattern
	}
	return host == pattern || strings.HasSuffix(host, "."+pattern)
}

// OpensHost reports whether an allow rule the user wrote (in a settings
// file, not an "always" answer) names the web host of t by its own name:
// not every fetch (`WebFetch`), not through a parent domain
// (`domain:example.com` for api.example.com), not a wildcard. Only such a
// rule lets web_fetch reach the host at a private address or another port
// (tools/web): a parent-domain or wildcard rule would hand that to whoever
// controls a subdomain's DNS (`domain:nip.io` would open
// 127.0.0.1.nip.io, and any host under it).
func (s Set) OpensHost(t Target) bool {
	if t.Domain == "" {
		return false
	}
	for _, r := range s {
		if r.Effect == Allow && r.domain == t.Domain && r.Source.Kind != "remembered" {
			return true
		}
	}
	return false
}

// Check is what the rules say of a call to a tool that reaches further than
// its arguments name and asks again (registry.RuleChecker): the deciding
// rule, and whether the user's own rule names the call's target (a
// pattern, not every call of the tool; written in a settings file, not an
// "always" answer; for a web fetch, the host itself: OpensHost).
func (s Set) Check(tool string, args json.RawMessage, cwd string) (r Rule, written, ok bool) {
	if len(s) == 0 {
		return Rule{}, false, false
	}
	t := TargetOf(tool, args, cwd)
	if r, ok = s.Decide(t); !ok {
		return Rule{}, false, false
	}
	written = r.Specific() && r.Source.Kind != "remembered"
	if t.Domain != "" {
		written = r.Effect == Allow && s.OpensHost(t)
	}
	return r, written, true
}
