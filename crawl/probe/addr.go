package probe

import (
	"encoding/binary"
	"net/netip"
)

// specialV4 are the IANA IPv4 Special-Purpose Address Registry's blocks
// (RFC 6890 and its updates), with multicast and limited broadcast: none
// is a public server's address, whatever the registry says of its global
// reachability (anycast relays and AS112 sinks are not MCP servers).
var specialV4 = prefixes(
	"0.0.0.0/8",          // "this network"; 0.0.0.1 reaches the local host on Linux
	"10.0.0.0/8",         // private
	"100.64.0.0/10",      // shared address space (CGNAT)
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local, cloud metadata
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments
	"192.0.2.0/24",       // documentation (TEST-NET-1)
	"192.31.196.0/24",    // AS112-v4
	"192.52.193.0/24",    // AMT
	"192.88.99.0/24",     // deprecated 6to4 relay anycast
	"192.168.0.0/16",     // private
	"192.175.48.0/24",    // direct delegation AS112
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // documentation (TEST-NET-2)
	"203.0.113.0/24",     // documentation (TEST-NET-3)
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved
	"255.255.255.255/32", // limited broadcast
)

// specialV6 are the IANA IPv6 Special-Purpose Address Registry's blocks,
// with multicast and the deprecated site-local block. The forms that embed
// an IPv4 address are not here: they are judged by that address.
var specialV6 = prefixes(
	"::/128",            // unspecified
	"::1/128",           // loopback
	"100::/64",          // discard-only
	"100:0:0:1::/64",    // dummy prefix
	"2001::/23",         // IETF protocol assignments (Teredo is judged apart)
	"2001:db8::/32",     // documentation
	"2620:4f:8000::/48", // direct delegation AS112
	"3fff::/20",         // documentation
	"5f00::/16",         // segment routing SIDs
	"fc00::/7",          // unique local
	"fe80::/10",         // link-local
	"fec0::/10",         // site-local, deprecated
	"ff00::/8",          // multicast
)

// Forms of IPv6 address that carry an IPv4 address.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")          // ::a.b.c.d, deprecated
	nat64          = netip.MustParsePrefix("64:ff9b::/96")   // well-known NAT64 prefix
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64
	sixToFour      = netip.MustParsePrefix("2002::/16")      // 6to4
	teredo         = netip.MustParsePrefix("2001::/32")      // Teredo
)

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// PublicAddr reports whether a is a public unicast address: in no IANA
// special-purpose block (IPv4 or IPv6), nor multicast. An IPv6 address
// that embeds an IPv4 one (IPv4-mapped, IPv4-compatible, NAT64 in
// 64:ff9b::/96 or 64:ff9b:1::/48, 6to4, Teredo) is judged by the IPv4
// address it reaches: [64:ff9b::7f00:1] is loopback through a NAT64
// gateway. A crawl of public candidate lists must not become a way to
// reach the crawling machine or its network.
func PublicAddr(a netip.Addr) bool {
	a = a.WithZone("")
	if a.Is4() || a.Is4In6() {
		return publicV4(a.Unmap())
	}
	for _, embedded := range embeddedV4(a) {
		if !publicV4(embedded) {
			return false
		}
	}
	if len(embeddedV4(a)) > 0 {
		return true
	}
	return a.IsValid() && !inAny(a, specialV6)
}

func publicV4(a netip.Addr) bool { return a.Is4() && !inAny(a, specialV4) }

// embeddedV4 are the IPv4 addresses an IPv6 address carries, none for a
// form that carries none. Teredo carries two, the server's and the
// client's (bit-inverted), and both must be public.
func embeddedV4(a netip.Addr) []netip.Addr {
	b := a.As16()
	v4 := func(off int, invert bool) netip.Addr {
		x := binary.BigEndian.Uint32(b[off:])
		if invert {
			x = ^x
		}
		var q [4]byte
		binary.BigEndian.PutUint32(q[:], x)
		return netip.AddrFrom4(q)
	}
	switch {
	case a == netip.IPv6Unspecified() || a == netip.IPv6Loopback():
		return nil
	case ipv4Compatible.Contains(a), nat64.Contains(a):
		return []netip.Addr{v4(12, false)}
	case nat64Local.Contains(a):
		// RFC 6052 §2.2 for a /48 prefix: the IPv4 address spans bits
		// 48-63 and 72-87, around the zero octet at bits 64-71.
		return []netip.Addr{netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]})}
	case sixToFour.Contains(a):
		return []netip.Addr{v4(2, false)}
	case teredo.Contains(a):
		return []netip.Addr{v4(4, false), v4(12, true)}
	}
	return nil
}
