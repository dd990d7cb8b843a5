// Package netguard is how acp-bridge reaches the network on a model's
// behalf (web_fetch, web_search) without becoming a way into the user's
// network: every connection goes through one dialer that checks the
// address it is about to connect to (after resolution, at connect time, so
// a name that resolves to a public address first and a private one later
// cannot switch it), and refuses loopback, private, link-local, cloud
// metadata and other special addresses and ports other than 80 and 443,
// unless the caller says the host is open (the user's own rule names it).
//
// With a proxy from the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)
// the dialer connects to the proxy, which connects to the target: the
// address the proxy reaches is the proxy's to check. The guard then
// resolves the target itself before the request and refuses it if any of
// its addresses is refused; a name that resolves differently for the proxy
// a moment later (DNS rebinding) is not seen. The proxy is the user's
// choice, so it is dialed whatever its address.
package netguard

import (
	"fmt"
	"net/netip"
	"strings"
)

// special is a range refused, with what it is.
type special struct {
	p   netip.Prefix
	why string
}

// special4 are the IPv4 ranges no fetch reaches unless its host is open,
// with what they are (IANA's special-purpose registry, and what cloud
// providers put their metadata services on).
var special4 = []special{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
}

// special6 are the IPv6 ranges refused inside 2000::/3 (everything outside
// it is refused anyway): protocol assignments (Teredo among them), 6to4,
// documentation.
var special6 = []special{
	{netip.MustParsePrefix("2001::/23"), "an IETF protocol address (Teredo and others)"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address"},
}

var (
	global6 = netip.MustParsePrefix("2000::/3")
	ula6    = netip.MustParsePrefix("fc00::/7")
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
)

// metadata are cloud metadata services, named as such in refusals. Most
// fall in ranges refused anyway; Azure's WireServer is a public address.
var metadata = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "AWS, GCP, Azure and others",
	netip.MustParseAddr("169.254.170.2"):   "AWS ECS",
	netip.MustParseAddr("169.254.0.23"):    "Tencent Cloud",
	netip.MustParseAddr("100.100.100.200"): "Alibaba Cloud",
	netip.MustParseAddr("192.0.0.192"):     "Oracle Cloud",
	netip.MustParseAddr("168.63.129.16"):   "Azure WireServer",
	netip.MustParseAddr("fd00:ec2::254"):   "AWS",
}

// Refusal says why an address is not reached: "a loopback address", "the
// cloud metadata service of AWS, GCP, Azure and others"; "" when it may
// be. An IPv4 address written as IPv6 (::ffff:127.0.0.1) is judged as the
// IPv4 address it is; an address with a zone is refused.
func Refusal(a netip.Addr) string {
	if !a.IsValid() {
		return "not an IP address"
	}
	if a.Zone() != "" {
		return "a scoped (zoned) address"
	}
	a = a.Unmap()
	if who, ok := metadata[a]; ok {
		return "the cloud metadata service of " + who
	}
	if a.Is4() {
		for _, s := range special4 {
			if s.p.Contains(a) {
				return s.why
			}
		}
		return ""
	}
	switch {
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case ula6.Contains(a):
		return "a private address"
	case nat64.Contains(a):
		// NAT64 reaches the IPv4 address it embeds: judge that one.
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if why := Refusal(v4); why != "" {
			return fmt.Sprintf("a NAT64 address of %s (%s)", v4, why)
		}
		return ""
	case !global6.Contains(a):
		return "not a global IPv6 address"
	}
	for _, s := range special6 {
		if s.p.Contains(a) {
			return s.why
		}
	}
	// ISATAP (RFC 5214): an interface id of 0:5efe or 200:5efe embeds an
	// IPv4 address the tunnel reaches.
	b := a.As16()
	if (b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		return "an ISATAP address"
	}
	return ""
}

// Port reports whether port may be reached without the host being open.
func Port(port uint16) bool { return port == 80 || port == 443 }

// HostRefusal says why a host name is refused whatever it resolves to; ""
// when it is not. A name whose last label is a number is an IPv4 address
// to the URL standard (WHATWG "ends in a number"), to C resolvers
// (inet_aton: 2130706433, 0x7f000001, 0177.0.0.1, 127.1 and 0 all read as
// 127.0.0.1 or 0.0.0.0) and so to most proxies, while Go's resolver
// sends it to DNS: the address the guard would check and the one a
// resolver or proxy elsewhere connects to could differ. Only the four
// decimal numbers netip reads are accepted as an address; every other
// numeric form is refused before anything resolves it.
func HostRefusal(host string) string {
	h := strings.TrimSuffix(host, ".")
	if _, err := netip.ParseAddr(host); err == nil || h == "" {
		return ""
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if hex, ok := strings.CutPrefix(strings.ToLower(last), "0x"); ok {
		last = strings.Trim(hex, "0123456789abcdef")
		if last != "" {
			return ""
		}
	} else if last == "" || strings.Trim(last, "0123456789") != "" {
		return ""
	}
	return "an IPv4 address in a shorthand form (decimal, octal or hex numbers, fewer than four parts, or a trailing dot); write it as four decimal numbers"
}
