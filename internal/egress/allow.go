package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// SettingKey is the setting that holds the allow-list; denials name it.
const SettingKey = "tools.sandbox.allowHosts"

// Pattern is one parsed allow-list entry.
type Pattern struct {
	// Name is the lower-case host name without a trailing dot; for a
	// wildcard it is the suffix after "*." ("example.com"). Empty for an
	// IP entry.
	Name string
	// Wildcard makes Name match names below it, not Name itself.
	Wildcard bool
	// IP is the address of an IP literal entry.
	IP netip.Addr
	// Port is the only port allowed (0: every port).
	Port int
}

// String is the entry in its normal form, as ParsePattern accepts it.
func (p Pattern) String() string {
	host := p.Name
	if p.Wildcard {
		host = "*." + host
	}
	if p.IP.IsValid() {
		host = p.IP.String()
		if p.IP.Is6() && p.Port != 0 {
			host = "[" + host + "]"
		}
	}
	if p.Port != 0 {
		host += ":" + strconv.Itoa(p.Port)
	}
	return host
}

// ParsePattern parses one allow-list entry: "host", "*.domain", an IPv4
// or IPv6 address, each optionally followed by ":port" (an IPv6 address
// with a port in brackets: "[::1]:8080"). Names are matched without
// regard to case.
func ParsePattern(s string) (Pattern, error) {
	raw := s
	s = strings.TrimSpace(s)
	if s == "" {
		return Pattern{}, fmt.Errorf("empty host pattern")
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@") {
		return Pattern{}, fmt.Errorf("host pattern %q: give a host name, not a URL (e.g. registry.npmjs.org or *.example.com)", raw)
	}
	// A bare IPv6 address has colons but no port.
	if ip, err := netip.ParseAddr(s); err == nil {
		if ip.Zone() != "" {
			return Pattern{}, fmt.Errorf("host pattern %q: an address with a zone is not supported", raw)
		}
		return Pattern{IP: ip.Unmap()}, nil
	}
	host, port := s, 0
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host = s[:i]
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 1 || n > 65535 {
			return Pattern{}, fmt.Errorf("host pattern %q: the port must be a number from 1 to 65535", raw)
		}
		port = n
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		ip, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return Pattern{}, fmt.Errorf("host pattern %q: %q is not an IPv6 address", raw, host)
		}
		return Pattern{IP: ip.Unmap(), Port: port}, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Is6() {
			return Pattern{}, fmt.Errorf("host pattern %q: put an IPv6 address with a port in brackets ([::1]:8080)", raw)
		}
		return Pattern{IP: ip, Port: port}, nil
	}
	p := Pattern{Port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		p.Wildcard, host = true, rest
	}
	name, err := normalName(host)
	if err != nil {
		return Pattern{}, fmt.Errorf("host pattern %q: %w", raw, err)
	}
	if p.Wildcard && !strings.Contains(name, ".") {
		// "*.com" would open a whole top-level domain.
		return Pattern{}, fmt.Errorf("host pattern %q: a wildcard needs a domain of at least two labels (e.g. *.example.com)", raw)
	}
	p.Name = name
	return p, nil
}

// normalName lower-cases a host name, drops one trailing dot and checks
// it is a DNS name: labels of letters, digits, '-' and '_', 1 to 63
// characters, 253 at most in all.
func normalName(h string) (string, error) {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" {
		return "", fmt.Errorf("no host name")
	}
	if len(h) > 253 {
		return "", fmt.Errorf("the host name is longer than 253 characters")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("%q has an empty label or one longer than 63 characters", h)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				if c == '*' {
					return "", fmt.Errorf("'*' is allowed only as the first label (*.example.com)")
				}
				return "", fmt.Errorf("%q has %q: use letters, digits, '-' and '_'", h, c)
			}
		}
	}
	return h, nil
}

// AllowList is a parsed tools.sandbox.allowHosts. The zero AllowList
// allows nothing.
type AllowList struct {
	patterns []Pattern
}

// ParseAllowList parses every entry (see ParsePattern); the first bad one
// is the error, naming its index.
func ParseAllowList(entries []string) (AllowList, error) {
	var a AllowList
	for i, e := range entries {
		p, err := ParsePattern(e)
		if err != nil {
			return AllowList{}, fmt.Errorf("%s[%d]: %w", SettingKey, i, err)
		}
		a.patterns = append(a.patterns, p)
	}
	return a, nil
}

// Empty reports whether the list allows nothing.
func (a AllowList) Empty() bool { return len(a.patterns) == 0 }

// AllowsName reports whether the host name (already normalName'd) on
// port is listed by a name or wildcard entry.
func (a AllowList) AllowsName(name string, port int) bool {
	return slices.ContainsFunc(a.patterns, func(p Pattern) bool {
		return p.Name != "" && (p.Port == 0 || p.Port == port) &&
			(p.Wildcard && strings.HasSuffix(name, "."+p.Name) || !p.Wildcard && name == p.Name)
	})
}

// ListsAddr reports whether ip on port is listed by an IP entry.
func (a AllowList) ListsAddr(ip netip.Addr, port int) bool {
	ip = ip.Unmap()
	return slices.ContainsFunc(a.patterns, func(p Pattern) bool {
		return p.IP.IsValid() && p.IP == ip && (p.Port == 0 || p.Port == port)
	})
}

// sharedSpace is RFC 6598's carrier-grade NAT range, private in effect.
var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

// nat64 is the well-known NAT64 prefix (RFC 6052): on a network with a
// NAT64 gateway 64:ff9b::7f00:1 reaches 127.0.0.1.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Internal reports whether ip is an address a sandbox must not reach
// without listing it: loopback, private, link-local, unspecified,
// multicast, shared (100.64.0.0/10) or IPv4 "this network" (0.0.0.0/8).
// An IPv4-mapped IPv6 address is judged as its IPv4 address.
func Internal(ip netip.Addr) bool {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		sharedSpace.Contains(ip) || (ip.Is4() && ip.As4()[0] == 0)
}
