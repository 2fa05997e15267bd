package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is an HTTP proxy on the host's loopback that lets an install step
// reach only the package registry it is configured with: a CONNECT to, or
// a request for, any other host:port is refused (403) and noted. The
// installer (npm, pip) is told to use it for every request; the
// installer's own code is the only code an install step runs.
type Proxy struct {
	srv          *http.Server
	ln           net.Listener
	allowed      map[string]bool
	via          *url.URL // the host's proxy to the registry, or nil
	viaTransport *http.Transport
	mu           sync.Mutex
	refused      []string
	// fetched and conns count what the registry sent and the tunnels
	// and requests it was asked through.
	fetched, conns atomic.Int64
}

// Traffic is what went through the proxy: the bytes the registry sent
// (through tunnels, TLS included) and the tunnels and plain requests
// made. An install that fetches nothing (all in npm's cache) adds none.
func (p *Proxy) Traffic() (bytes, connections int64) {
	return p.fetched.Load(), p.conns.Load()
}

// NewProxy starts a proxy that allows the hosts (and ports) of the URLs
// given.
func NewProxy(allow ...string) (*Proxy, error) {
	return newProxy(nil, allow)
}

// newProxy sets every field before the server starts: ServeHTTP reads
// them from its own goroutines without a lock.
func newProxy(via *url.URL, allow []string) (*Proxy, error) {
	p := &Proxy{allowed: map[string]bool{}, via: via}
	for _, a := range allow {
		u, err := url.Parse(a)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("proxy: %q is not a registry URL", a)
		}
		p.allowed[hostPort(u)] = true
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.ln = ln
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// direct reaches the registry itself, never through a proxy of the host.
var direct = &http.Transport{Proxy: nil, ResponseHeaderTimeout: time.Minute}

func hostPort(u *url.URL) string {
	h, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return strings.ToLower(net.JoinHostPort(h, port))
}

// URL is the proxy's address, for the installer's configuration.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Refused lists the host:port the proxy refused, in order.
func (p *Proxy) Refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refused...)
}

// Close stops the proxy and its tunnels.
func (p *Proxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	return p.srv.Close()
}

func (p *Proxy) refuse(w http.ResponseWriter, target string) {
	p.mu.Lock()
	p.refused = append(p.refused, target)
	p.mu.Unlock()
	http.Error(w, "the sandbox's proxy reaches only the package registry, not "+target, http.StatusForbidden)
}

// ServeHTTP tunnels a CONNECT to the registry, or forwards a plain
// request for it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		target := strings.ToLower(r.Host)
		if _, _, err := net.SplitHostPort(target); err != nil {
			target = net.JoinHostPort(target, "443")
		}
		if !p.allowed[target] {
			p.refuse(w, target)
			return
		}
		up, err := p.dial(target)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			up.Close()
			http.Error(w, "no tunnel", http.StatusInternalServerError)
			return
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			up.Close()
			return
		}
		_, _ = conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
		p.conns.Add(1)
		go func() {
			_, _ = io.Copy(up, buf)
			up.Close()
		}()
		n, _ := io.Copy(conn, up)
		p.fetched.Add(n)
		conn.Close()
		up.Close()
		return
	}
	if r.URL.Host == "" || !p.allowed[hostPort(r.URL)] {
		p.refuse(w, r.URL.Host)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	resp, err := p.transport().RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	p.conns.Add(1)
	n, _ := io.Copy(w, resp.Body)
	p.fetched.Add(n)
}
