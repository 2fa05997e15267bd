package probe

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
// information is stripped (a credential has no place in a public release,
// nor in a message); surrounding whitespace is trimmed. Path and query are kept as given, in
// their escaped form: servers may tell "/MCP" from "/mcp". The server_id is
// the normalised URL itself, so it stays readable and two spellings of one
// endpoint get one id.
func Normalise(raw string) (string, *url.URL, error) {
	s := StripUserinfo(strings.TrimSpace(raw))
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
	u.User = nil // StripUserinfo left none that url.Parse would see
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

// StripUserinfo removes the user information ("user:password@") from the
// authority of a URL given as text, before the URL is parsed, written or
// logged: it works on text that does not parse too, so that no error
// message can echo a credential.
func StripUserinfo(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return raw
	}
	return raw[:i+3] + rest[at+1:]
}
