package egress

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParsePattern_NormalFormsAndBadEntries(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Registry.NPMjs.org.", "registry.npmjs.org"},
		{"*.example.com", "*.example.com"},
		{"example.com:8443", "example.com:8443"},
		{"10.0.0.5", "10.0.0.5"},
		{"127.0.0.1:7233", "127.0.0.1:7233"},
		{"::1", "::1"},
		{"[fd00::1]:443", "[fd00::1]:443"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
	} {
		p, err := ParsePattern(tc.in)
		if err != nil || p.String() != tc.want {
			t.Errorf("ParsePattern(%q) = %q, %v; want %q", tc.in, p.String(), err, tc.want)
		}
	}
	for name, tc := range map[string]struct{ in, want string }{
		"empty":             {" ", "empty host pattern"},
		"url":               {"https://example.com", "not a URL"},
		"path":              {"example.com/x", "not a URL"},
		"star alone":        {"*", "'*' is allowed only as the first label"},
		"star inside":       {"a.*.example.com", "'*' is allowed only as the first label"},
		"star tld":          {"*.com", "at least two labels"},
		"port zero":         {"example.com:0", "port must be a number from 1 to 65535"},
		"port text":         {"example.com:https", "port must be a number"},
		"port too big":      {"example.com:70000", "port must be a number"},
		"bad character":     {"exa mple.com", `has ' '`},
		"empty label":       {"example..com", "empty label"},
		"v6 with bare port": {"fd00::1:443x", "port must be"},
		"bad brackets":      {"[example.com]:443", "is not an IPv6 address"},
		"zone":              {"fe80::1%eth0", "zone"},
	} {
		_, err := ParsePattern(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: ParsePattern(%q) error %v, want one line with %q", name, tc.in, err, tc.want)
		}
	}
}

func TestParseAllowList_NamesTheBadIndex(t *testing.T) {
	_, err := ParseAllowList([]string{"example.com", "http://x"})
	if err == nil || !strings.HasPrefix(err.Error(), "tools.sandbox.allowHosts[1]: ") {
		t.Fatalf("error %v, want it to name tools.sandbox.allowHosts[1]", err)
	}
}

func TestAllowList_Matching(t *testing.T) {
	a, err := ParseAllowList([]string{"registry.npmjs.org", "*.example.com", "pinned.test:443", "10.1.2.3:8080"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		port int
		want bool
	}{
		{"registry.npmjs.org", 443, true},
		{"registry.npmjs.org", 22, true}, // no port listed: every port
		{"npmjs.org", 443, false},
		{"evilregistry.npmjs.org", 443, false},
		{"a.example.com", 443, true},
		{"a.b.example.com", 80, true},
		{"example.com", 443, false}, // the wildcard is below the domain only
		{"badexample.com", 443, false},
		{"pinned.test", 443, true},
		{"pinned.test", 80, false},
	} {
		if got := a.AllowsName(tc.name, tc.port); got != tc.want {
			t.Errorf("AllowsName(%s, %d) = %v, want %v", tc.name, tc.port, got, tc.want)
		}
	}
	ip := netip.MustParseAddr("10.1.2.3")
	if !a.ListsAddr(ip, 8080) || a.ListsAddr(ip, 80) || a.ListsAddr(netip.MustParseAddr("10.1.2.4"), 8080) {
		t.Error("an IP entry with a port must match that address and port only")
	}
	if !a.ListsAddr(netip.MustParseAddr("::ffff:10.1.2.3"), 8080) {
		t.Error("an IPv4-mapped address must match its IPv4 entry")
	}
}

func TestInternal(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "127.9.9.9", "::1", "10.0.0.1", "172.16.0.1", "192.168.1.1",
		"169.254.169.254", "fe80::1", "fc00::1", "0.0.0.0", "0.1.2.3", "::", "100.64.0.1", "224.0.0.1", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a00:1"} {
		if !Internal(netip.MustParseAddr(s)) {
			t.Errorf("Internal(%s) = false", s)
		}
	}
	for _, s := range []string{"203.0.113.7", "8.8.8.8", "2606:4700::1111", "64:ff9b::808:808"} {
		if Internal(netip.MustParseAddr(s)) {
			t.Errorf("Internal(%s) = true", s)
		}
	}
}
