// Package ociroot fetches an OCI or Docker image from its registry and
// flattens it into a root filesystem on disk: the reference resolved to a
// digest and pulled by it, this machine's platform picked from an index,
// every blob checked against its digest, the layers applied in order with
// their whiteouts, and nothing a layer holds (a path with "..", a link
// out of the root, a device node, more bytes or files than allowed) able
// to reach outside the folder or fill the disk.
package ociroot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Options configure a pull.
type Options struct {
	// Transport carries every request (registry, token service, blob
	// redirects); the caller's address policy lives in its dialer.
	Transport http.RoundTripper
	// PlainHTTP lets a registry on a loopback address be reached over
	// plain HTTP, as container tools do for localhost. Without it every
	// request is HTTPS.
	PlainHTTP bool
	// MaxBytes bounds the image: the compressed layers, the bytes of
	// their uncompressed streams, and, apart, the bytes written to disk
	// as they are written (a sparse entry's holes included). MaxFiles
	// bounds its entries.
	MaxBytes int64
	MaxFiles int
	// Platform is the image to pick from an index; empty means
	// linux and this machine's architecture.
	Platform v1.Platform
	// UserAgent names the client to the registry.
	UserAgent string
}

// Defaults of Options.
const (
	DefaultMaxBytes = 2 << 30
	DefaultMaxFiles = 500_000
)

func (o *Options) defaults() {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Platform.OS == "" {
		o.Platform = HostPlatform()
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
}

// HostPlatform is the platform of this machine's images: linux and its
// architecture.
func HostPlatform() v1.Platform { return v1.Platform{OS: "linux", Architecture: runtime.GOARCH} }

// Config is what an image says of how to run it.
type Config struct {
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	Env        []string `json:"env,omitempty"`
	WorkingDir string   `json:"working_dir,omitempty"`
	// User is the user the image names; it is recorded, and the image
	// runs as the sandbox's unprivileged user whatever it says.
	User string `json:"user,omitempty"`
}

// Image is an image resolved in its registry.
type Image struct {
	// Digest is the digest the reference resolved to (an index's, or
	// the image's when the reference names an image): the cache key.
	Digest string
	// Ref is the reference, pinned to Digest.
	Ref string
	ref name.Digest
	o   Options
}

// ErrPlainHTTP is a registry that would be reached over plain HTTP
// without Options.PlainHTTP.
var ErrPlainHTTP = errors.New("plain HTTP to a registry is allowed only to a loopback address, with --allow-private")

// parse reads ref; a reference that the registry would be asked over
// plain HTTP is refused unless PlainHTTP allows it and the host is a
// loopback address.
func parse(ref string, o *Options) (name.Reference, error) {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		// StrictValidation wants a tag or digest; say so plainly.
		return nil, fmt.Errorf("%q: %w", ref, err)
	}
	reg := r.Context().Registry
	if reg.Scheme() == "http" {
		host := reg.RegistryStr()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		ip := net.ParseIP(strings.Trim(host, "[]"))
		loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
		if !o.PlainHTTP || !loopback {
			return nil, fmt.Errorf("%s: %w", reg.RegistryStr(), ErrPlainHTTP)
		}
	}
	return r, nil
}

func (o *Options) remote(ctx context.Context) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(authn.Anonymous),
		remote.WithTransport(capped{httpsOnly{o.Transport, o.PlainHTTP}}), remote.WithPlatform(o.Platform)}
	if o.UserAgent != "" {
		opts = append(opts, remote.WithUserAgent(o.UserAgent))
	}
	return opts
}

// httpsOnly refuses a plain HTTP request to anything but a loopback
// address, whatever led to it (a token realm, a redirect).
type httpsOnly struct {
	rt    http.RoundTripper
	plain bool
}

func (h httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		ip := net.ParseIP(req.URL.Hostname())
		if !h.plain || req.URL.Scheme != "http" || !(req.URL.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())) {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, fmt.Errorf("%s: %w", req.URL.Redacted(), ErrPlainHTTP)
		}
	}
	return h.rt.RoundTrip(req)
}

// Caps of the registry's documents read into memory. go-containerregistry
// caps a manifest at 100 MiB, and drains the ping's answer whole; these
// hold each to what a real one needs. A token (64 KiB) and an error's
// text (64 KiB) are capped by go-containerregistry itself, a config blob
// by maxConfig, and a layer by the image's bound as it is read.
const (
	// MaxManifest caps a manifest or an index: 4 MiB, what the OCI
	// distribution spec asks registries to accept at least, and Docker
	// Hub's limit.
	MaxManifest = 4 << 20
	// maxPing caps the answer to GET /v2/, which is only drained.
	maxPing = 64 << 10
)

// ErrDocumentTooBig is a registry document over its cap.
var ErrDocumentTooBig = errors.New("registry document over its size cap")

// capped holds each document the registry sends to its cap, refused at
// its Content-Length when that says more, and as it is read otherwise (a
// stream without end stops at the cap).
type capped struct{ rt http.RoundTripper }

func (c capped) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	var max int64
	var what string
	switch p := req.URL.Path; {
	case strings.Contains(p, "/manifests/"):
		max, what = MaxManifest, "manifest"
	case p == "/v2/" || p == "/v2":
		max, what = maxPing, "answer to /v2/"
	default:
		return resp, nil
	}
	if resp.ContentLength > max {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %w: the %s is %d bytes, more than %d", req.URL.Redacted(), ErrDocumentTooBig, what, resp.ContentLength, max)
	}
	resp.Body = &cappedBody{rc: resp.Body, left: max, max: max, url: req.URL.Redacted(), what: what}
	return resp, nil
}

// cappedBody reads at most max bytes of a body; a byte more is an error.
type cappedBody struct {
	rc        io.ReadCloser
	left, max int64
	url, what string
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - 1, fmt.Errorf("%s: %w: the %s is more than %d bytes", b.url, ErrDocumentTooBig, b.what, b.max)
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// Resolve asks the registry what ref names now (anonymously, through the
// registries' token flow where they ask for one) and pins it to that
// digest; a reference that names a digest needs no request.
func Resolve(ctx context.Context, ref string, o Options) (*Image, error) {
	o.defaults()
	r, err := parse(ref, &o)
	if err != nil {
		return nil, err
	}
	if d, ok := r.(name.Digest); ok {
		return &Image{Digest: d.DigestStr(), Ref: d.Context().Digest(d.DigestStr()).String(), ref: d, o: o}, nil
	}
	desc, err := remote.Head(r, o.remote(ctx)...)
	if err != nil {
		// Some registries answer HEAD badly; GET is what counts.
		d, gerr := remote.Get(r, o.remote(ctx)...)
		if gerr != nil {
			return nil, fmt.Errorf("resolving %s: %w", ref, gerr)
		}
		desc = &d.Descriptor
	}
	pinned := r.Context().Digest(desc.Digest.String())
	return &Image{Digest: desc.Digest.String(), Ref: pinned.String(), ref: pinned, o: o}, nil
}

// fetch gets the pinned image for this platform, its manifest checked
// against the digest.
func (im *Image) fetch(ctx context.Context) (v1.Image, string, error) {
	img, err := remote.Image(im.ref, im.o.remote(ctx)...)
	if err != nil {
		return nil, "", fmt.Errorf("pulling %s: %w", im.Ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return nil, "", err
	}
	return img, d.String(), nil
}

// maxConfig bounds an image's config blob: a real one is a few KiB.
const maxConfig = 4 << 20

// ImageConfig reads the image's run configuration from its config blob.
func imageConfig(img v1.Image) (Config, error) {
	// The config blob is read whole into memory: its declared size is
	// bounded first, and the registry's reader holds the blob to that size
	// and digest, so an endless stream cannot grow the crawl.
	m, err := img.Manifest()
	if err != nil {
		return Config{}, fmt.Errorf("image manifest: %w", err)
	}
	if m.Config.Size < 0 || m.Config.Size > maxConfig {
		return Config{}, fmt.Errorf("image config: %d bytes declared, more than the %d read", m.Config.Size, maxConfig)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Config{}, fmt.Errorf("image config: %w", err)
	}
	c := cf.Config
	return Config{Entrypoint: c.Entrypoint, Cmd: c.Cmd, Env: c.Env, WorkingDir: c.WorkingDir, User: c.User}, nil
}
