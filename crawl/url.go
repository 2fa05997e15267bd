package crawl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Normalise returns the server_id of a candidate URL and the URL to probe.
//
// The rule: the scheme must be http or https (case-insensitive); scheme and
// host are lowercased; the default port (80 for http, 443 for https) is
// removed; an empty path becomes "/"; the fragment is dropped; user
// information is refused (a credential has no place in a public id);
// surrounding whitespace is trimmed. Path and query are kept as given, in
// their escaped form: servers may tell "/MCP" from "/mcp". The server_id is
// the normalised URL itself, so it stays readable and two spellings of one
// endpoint get one id.
func Normalise(raw string) (string, *url.URL, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", nil, errors.New("empty URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", nil, fmt.Errorf("not a URL: %w", err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", nil, fmt.Errorf("scheme %q: only http and https are crawled", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return "", nil, fmt.Errorf("%q has no host", s)
	}
	if u.User != nil {
		return "", nil, fmt.Errorf("%q carries user information", s)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	}
	return u.String(), u, nil
}
