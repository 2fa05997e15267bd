package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream says where the server behind the proxy is: a URL or a command.
type Upstream struct {
	// URL is an MCP endpoint: Streamable HTTP, or the legacy HTTP+SSE
	// transport when its path ends in /sse (the convention the crawl
	// follows too).
	URL string
	// Command starts a stdio server, one process per session: the program
	// and its arguments.
	Command []string
	// Transport, when set, makes each upstream session's transport: for a
	// program that embeds the proxy (an in-memory server, a custom
	// client). It takes the place of URL and Command.
	Transport func() mcp.Transport
	// Env, when not nil, is the environment of Command (as exec.Cmd.Env).
	Env []string
	// Stderr receives the command's standard error; nil discards it.
	Stderr io.Writer
	// HTTPClient carries the HTTP requests; nil means one with a dial
	// timeout and no overall timeout (streams and calls may last).
	HTTPClient *http.Client
	// MaxMessage bounds one message from the upstream, in bytes.
	MaxMessage int64
}

// Validate says whether u names exactly one upstream that can be used.
func (u Upstream) Validate() error {
	switch {
	case u.Transport != nil:
		return nil
	case u.URL != "" && len(u.Command) > 0:
		return errors.New("give an upstream URL or a command, not both")
	case u.URL == "" && len(u.Command) == 0:
		return errors.New("no upstream: give a URL or a command")
	case u.URL != "":
		p, err := url.Parse(u.URL)
		if err != nil {
			return fmt.Errorf("upstream URL: %w", err)
		}
		if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("upstream URL %q: want an http or https URL", u.URL)
		}
	}
	return nil
}

// isSSE reports whether the URL names a legacy SSE endpoint.
func (u Upstream) isSSE() bool {
	p, err := url.Parse(u.URL)
	return err == nil && strings.HasSuffix(strings.TrimSuffix(p.Path, "/"), "/sse")
}

// defaultHTTPClient bounds connecting, not answering: a tool call or an
// event stream may rightly last long, and the relay ends them when either
// side goes away.
var defaultHTTPClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   10 * time.Second,
	ResponseHeaderTimeout: 0,
	MaxIdleConnsPerHost:   64,
	IdleConnTimeout:       90 * time.Second,
	ForceAttemptHTTP2:     true,
}}

// connect opens a new upstream session's connection.
func (u Upstream) connect(ctx context.Context) (mcp.Connection, error) {
	client := u.HTTPClient
	if client == nil {
		client = defaultHTTPClient
	}
	maxMsg := u.MaxMessage
	if maxMsg <= 0 {
		maxMsg = DefaultMaxMessage
	}
	switch {
	case u.Transport != nil:
		return u.Transport().Connect(ctx)
	case len(u.Command) > 0:
		cmd := exec.Command(u.Command[0], u.Command[1:]...)
		cmd.Env = u.Env
		cmd.Stderr = u.Stderr
		// Closing the connection closes the command's stdin, then signals
		// and kills it if it does not exit. Its lines are bounded as an
		// HTTP upstream's messages are.
		return startCommand(cmd, maxMsg, 2*time.Second)
	case u.isSSE():
		return (&mcp.SSEClientTransport{Endpoint: u.URL, HTTPClient: client}).Connect(ctx)
	default:
		return newStreamConn(u.URL, client, maxMsg), nil
	}
}

// SplitCommand splits a command line as a POSIX shell would split words:
// whitespace separates them, single quotes keep text as it is, double
// quotes keep it but for \" and \\, a backslash outside quotes escapes the
// next character. Nothing is expanded.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("command %q: unterminated single quote", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("command %q: unterminated double quote", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
