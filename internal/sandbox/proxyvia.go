package sandbox

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// NewProxyVia is NewProxy for a machine that reaches the registry only
// through a proxy of its own (npm's https-proxy or proxy): the allowed
// requests and tunnels go through upstream, the others are refused as
// by NewProxy. A nil upstream is NewProxy.
func NewProxyVia(upstream *url.URL, allow ...string) (*Proxy, error) {
	return newProxy(upstream, allow)
}

// dial opens a connection to target (host:port), through the upstream
// proxy when there is one.
func (p *Proxy) dial(target string) (net.Conn, error) {
	if p.via == nil {
		return net.DialTimeout("tcp", target, 30*time.Second)
	}
	addr := p.via.Host
	if p.via.Port() == "" {
		addr = net.JoinHostPort(p.via.Hostname(), map[bool]string{true: "443", false: "80"}[p.via.Scheme == "https"])
	}
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("the host's proxy %s: %w", p.via.Redacted(), err)
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	if u := p.via.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("the host's proxy %s: %w", p.via.Redacted(), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("the host's proxy %s refused CONNECT %s: %s", p.via.Redacted(), target, resp.Status)
	}
	_ = conn.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		// The registry spoke first, within the proxy's reply: keep it.
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// transport forwards plain requests, through the upstream proxy when
// there is one.
func (p *Proxy) transport() *http.Transport {
	if p.via == nil {
		return direct
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.viaTransport == nil {
		p.viaTransport = &http.Transport{Proxy: http.ProxyURL(p.via), ResponseHeaderTimeout: time.Minute}
	}
	return p.viaTransport
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }
