package httpserve

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGuardMCP(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8090}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8090}
	cases := []struct {
		name, method, host, origin, site, ctype string
		local                                   net.Addr
		want                                    int
	}{
		{"plain client", "POST", "127.0.0.1:8090", "", "", "application/json", loop, 0},
		{"charset", "POST", "127.0.0.1:8090", "", "", "application/json; charset=utf-8", loop, 0},
		{"localhost", "POST", "localhost:8090", "", "", "application/json", loop, 0},
		{"ipv6 loopback", "POST", "[::1]:8090", "", "", "application/json", loop, 0},
		{"own origin", "POST", "127.0.0.1:8090", "http://127.0.0.1:8090", "", "application/json", loop, 0},
		{"rebound host", "POST", "evil.example:8090", "", "", "application/json", loop, http.StatusForbidden},
		{"public bind, any host", "POST", "mcp.example", "", "", "application/json", public, 0},
		{"foreign origin", "POST", "127.0.0.1:8090", "http://evil.example", "", "application/json", loop, http.StatusForbidden},
		{"foreign origin on GET", "GET", "127.0.0.1:8090", "http://evil.example", "", "", loop, http.StatusForbidden},
		{"other port", "POST", "127.0.0.1:8090", "http://127.0.0.1:9999", "", "application/json", loop, http.StatusForbidden},
		{"null origin", "POST", "127.0.0.1:8090", "null", "", "application/json", loop, http.StatusForbidden},
		{"https origin, default port", "POST", "mcp.example", "https://mcp.example", "", "application/json", public, http.StatusForbidden},
		{"http origin, default port", "POST", "mcp.example", "http://mcp.example", "", "application/json", public, 0},
		{"cross-site without origin", "POST", "127.0.0.1:8090", "", "cross-site", "application/json", loop, http.StatusForbidden},
		{"same-origin fetch", "POST", "127.0.0.1:8090", "", "same-origin", "application/json", loop, 0},
		{"text/plain", "POST", "127.0.0.1:8090", "", "", "text/plain", loop, http.StatusUnsupportedMediaType},
		{"no content type", "POST", "127.0.0.1:8090", "", "", "", loop, http.StatusUnsupportedMediaType},
		{"GET without body", "GET", "127.0.0.1:8090", "", "", "", loop, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, "http://"+c.host+"/mcp", nil)
			r.Host = c.host
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, c.local))
			for k, v := range map[string]string{"Origin": c.origin, "Sec-Fetch-Site": c.site, "Content-Type": c.ctype} {
				if v != "" {
					r.Header.Set(k, v)
				}
			}
			if got, why := checkMCPRequest(r); got != c.want {
				t.Errorf("status %d (%s), want %d", got, why, c.want)
			}
		})
	}
}
