package httpserve

import (
	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// GuardMCP refuses what a web page could make a browser send to an MCP
// endpoint on another origin, as the MCP transport specification asks of
// servers ("MUST validate the Origin header"):
//
//   - a request whose Origin is not the endpoint's own (the scheme, host
//     and port the client addressed), or "null", or which the browser
//     marks as cross-site (Sec-Fetch-Site) without an Origin: 403;
//   - on a loopback listener, a Host that does not name a loopback
//     address: a DNS-rebinding page reaches 127.0.0.1 under its own name
//     (403);
//   - a POST whose Content-Type is not application/json: text/plain and
//     form bodies are what a page may send cross-site without a preflight
//     (415).
//
// Clients that are not browsers send no Origin and pass.
func GuardMCP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, why := checkMCPRequest(r); code != 0 {
			http.Error(w, why, code)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func checkMCPRequest(r *http.Request) (int, string) {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		if isLoopback(la.String()) && !isLoopback(r.Host) {
			return http.StatusForbidden, "forbidden: Host " + quote(r.Host) + " does not name this loopback listener"
		}
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if err != nil || u.Host == "" || !sameOrigin(u, scheme, r.Host) {
			return http.StatusForbidden, "forbidden: cross-origin request from " + quote(origin)
		}
	} else if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return http.StatusForbidden, "forbidden: cross-site request (Sec-Fetch-Site: " + site + ")"
	}
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			return http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'"
		}
	}
	return 0, ""
}

// sameOrigin reports whether the origin u names the scheme, host and port
// the request was addressed to (default ports made explicit on both sides).
func sameOrigin(u *url.URL, scheme, host string) bool {
	withPort := func(h, scheme string) string {
		if _, _, err := net.SplitHostPort(h); err == nil {
			return strings.ToLower(h)
		}
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		return strings.ToLower(net.JoinHostPort(strings.Trim(h, "[]"), port))
	}
	if !strings.EqualFold(u.Scheme, scheme) {
		return false
	}
	return withPort(u.Host, scheme) == withPort(host, scheme)
}

// isLoopback reports whether a host or host:port names a loopback address
// ("localhost" included).
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return "\"" + termtext.Safe(s) + "\""
}
