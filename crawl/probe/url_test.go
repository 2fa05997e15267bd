package probe

import (
	"strings"
	"testing"
)

func TestNormalise(t *testing.T) {
	cases := []struct{ in, id, err string }{
		{in: "https://Example.COM/mcp", id: "https://example.com/mcp"},
		{in: "HTTPS://example.com:443/mcp", id: "https://example.com/mcp"},
		{in: "http://example.com:80", id: "http://example.com/"},
		{in: "http://example.com:8080/", id: "http://example.com:8080/"},
		{in: "https://example.com:80/x", id: "https://example.com:80/x"},
		{in: "  https://example.com/MCP?key=v#frag ", id: "https://example.com/MCP?key=v"},
		{in: "https://[::1]:443/sse", id: "https://[::1]/sse"},
		{in: "https://example.com/a%2Fb", id: "https://example.com/a%2Fb"},
		{in: "ftp://example.com/", err: "only http and https"},
		{in: "example.com/mcp", err: "only http and https"},
		{in: "https:///mcp", err: "no host"},
		{in: "https://user:pw@example.com/", id: "https://example.com/"},
		{in: "https://a@b:c@example.com:443/x", id: "https://example.com/x"},
		{in: "", err: "empty"},
		{in: "http://%zz", err: "not a URL"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			id, u, err := Normalise(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("%q: %q, %v; want an error with %q", c.in, id, err, c.err)
				}
				return
			}
			if err != nil || id != c.id || u.String() != id {
				t.Errorf("%q: %q (%v), want %q", c.in, id, err, c.id)
			}
			if again, _, _ := Normalise(id); again != id {
				t.Errorf("%q: not idempotent: %q then %q", c.in, id, again)
			}
		})
	}
}
