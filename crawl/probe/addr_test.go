package probe

import (
	"net/netip"
	"testing"
)

// TestPublicAddr: every special-purpose block is refused, and an address
// that embeds an IPv4 one is judged by it.
func TestPublicAddr(t *testing.T) {
	cases := []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true}, {"1.1.1.1", true}, {"2606:4700::1111", true}, {"::ffff:8.8.4.4", true},
		{"127.0.0.1", false}, {"127.255.255.254", false}, {"10.1.2.3", false}, {"172.16.0.1", false}, {"172.31.255.255", false},
		{"192.168.1.1", false}, {"169.254.169.254", false}, {"100.64.0.1", false}, {"100.127.255.255", false},
		{"0.0.0.0", false}, {"0.0.0.1", false}, {"0.255.255.255", false}, {"192.0.0.9", false}, {"192.0.2.1", false},
		{"192.31.196.1", false}, {"192.52.193.1", false}, {"192.88.99.1", false}, {"192.175.48.1", false},
		{"198.18.0.1", false}, {"198.19.255.255", false}, {"198.51.100.7", false}, {"203.0.113.9", false},
		{"224.0.0.1", false}, {"239.255.255.250", false}, {"240.0.0.1", false}, {"255.255.255.255", false},
		{"172.32.0.1", true}, {"100.128.0.1", true}, {"198.20.0.1", true}, {"192.0.1.1", true},
		{"::", false}, {"::1", false}, {"fd00::1", false}, {"fc00::1", false}, {"fe80::1", false}, {"fe80::1%eth0", false},
		{"fec0::1", false}, {"ff02::1", false}, {"100::1", false}, {"2001:db8::1", false}, {"2001:2::1", false},
		{"2001:10::1", false}, {"2001:20::1", false}, {"2620:4f:8000::1", false}, {"3fff::1", false}, {"5f00::1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false},
		// IPv4-compatible.
		{"::127.0.0.1", false}, {"::10.0.0.1", false}, {"::0.0.0.1", false}, {"::8.8.8.8", true},
		// NAT64, well-known and local-use prefixes.
		{"64:ff9b::7f00:1", false}, {"64:ff9b::a9fe:a9fe", false}, {"64:ff9b::808:808", true},
		{"64:ff9b:1:7f00:0:100::", false}, {"64:ff9b:1:808:8:800::", true},
		// 6to4.
		{"2002:7f00:1::1", false}, {"2002:a00:1::1", false}, {"2002:808:808::1", true},
		// Teredo: the server, then the client's address inverted.
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", false}, // client 127.0.0.1
		{"2001:0:7f00:1:0:0:f7f7:f7f7", false},          // server 127.0.0.1
		{"2001:0:808:808:0:0:f7f7:f7f7", true},          // both 8.8.8.8
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, // client 192.0.2.45, documentation
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			if got := PublicAddr(netip.MustParseAddr(c.addr)); got != c.public {
				t.Errorf("PublicAddr(%s) = %v, want %v", c.addr, got, c.public)
			}
		})
	}
}
