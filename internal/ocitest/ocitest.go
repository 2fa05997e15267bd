// Package ocitest serves OCI images from a registry on loopback for
// tests: go-containerregistry's in-memory registry behind a token
// challenge as the public registries answer, images built from tar
// entries the test names, and a way to corrupt a blob in transit.
package ocitest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Entry is one tar entry of a layer.
type Entry struct {
	Name     string
	Type     byte // tar.TypeReg when zero
	Body     []byte
	Mode     int64 // 0644 when zero
	Linkname string
	// Zeros, when positive, makes Body that many zero bytes, written
	// without holding them: a layer bomb compresses to almost nothing.
	Zeros int64
}

// Layer is a gzip-compressed layer of entries.
func Layer(t testing.TB, entries ...Entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Mode: e.Mode, Linkname: e.Linkname, Size: int64(len(e.Body)), Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if e.Zeros > 0 {
			h.Size = e.Zeros
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.Zeros > 0 {
			if _, err := io.CopyN(tw, zeros{}, e.Zeros); err != nil {
				t.Fatal(err)
			}
		} else if h.Size > 0 {
			if _, err := tw.Write(e.Body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return static.NewLayer(buf.Bytes(), types.DockerLayer)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Image is an image of layers with the run configuration cfg.
func Image(t testing.TB, cfg v1.Config, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", "amd64", cfg
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// ForPlatform is an image of an index and the platform it is for.
type ForPlatform struct {
	Platform v1.Platform
	Image    v1.Image
}

// Index is an index of images, each for its platform, in order.
func Index(imgs ...ForPlatform) v1.ImageIndex {
	var adds []mutate.IndexAddendum
	for _, p := range imgs {
		adds = append(adds, mutate.IndexAddendum{Add: p.Image, Descriptor: v1.Descriptor{Platform: &p.Platform}})
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

// Registry is a registry on loopback.
type Registry struct {
	// Host is its host:port, to put in references.
	Host string
	// Token, when set, is demanded as a bearer token that the realm at
	// /token hands out, as docker.io and ghcr.io do for anonymous pulls.
	Token string

	mu      sync.Mutex
	corrupt map[string]bool
	// Requests counts the requests that reached the registry.
	requests int
	tokens   int
}

// NewRegistry starts a registry on loopback, closed when the test ends.
func NewRegistry(t testing.TB, token string) *Registry {
	r := &Registry{Token: token, corrupt: map[string]bool{}}
	reg := registry.New(registry.Logger(nopLogger()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests++
		r.mu.Unlock()
		if req.URL.Path == "/token" {
			r.mu.Lock()
			r.tokens++
			r.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"token": "`+r.Token+`"}`)
			return
		}
		if r.Token != "" && req.Method != http.MethodPut && req.Method != http.MethodPost && req.Method != http.MethodPatch &&
			req.Header.Get("Authorization") != "Bearer "+r.Token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+req.Host+`/token",service="test",scope="repository:x:pull"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
			return
		}
		if i := strings.LastIndex(req.URL.Path, "/blobs/"); i >= 0 && req.Method == http.MethodGet {
			r.mu.Lock()
			bad := r.corrupt[req.URL.Path[i+len("/blobs/"):]]
			r.mu.Unlock()
			if bad {
				rec := httptest.NewRecorder()
				reg.ServeHTTP(rec, req)
				b := rec.Body.Bytes()
				if len(b) > 0 {
					b[len(b)/2] ^= 0xff
				}
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				w.Write(b)
				return
			}
		}
		reg.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// Tokens is how many tokens the realm handed out.
func (r *Registry) Tokens() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tokens
}

// Corrupt makes the registry serve the blob of digest d with one byte
// changed.
func (r *Registry) Corrupt(d v1.Hash) {
	r.mu.Lock()
	r.corrupt[d.String()] = true
	r.mu.Unlock()
}

// Push writes img (a v1.Image or v1.ImageIndex) as repo:tag and returns
// its digest.
func (r *Registry) Push(t testing.TB, repo, tag string, img any) v1.Hash {
	t.Helper()
	ref, err := name.NewTag(r.Host + "/" + repo + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	var opts []remote.Option
	if r.Token != "" {
		opts = append(opts, remote.WithTransport(bearer{r.Token}))
	}
	var d v1.Hash
	switch x := img.(type) {
	case v1.Image:
		err = remote.Write(ref, x, opts...)
		if err == nil {
			d, err = x.Digest()
		}
	case v1.ImageIndex:
		err = remote.WriteIndex(ref, x, opts...)
		if err == nil {
			d, err = x.Digest()
		}
	default:
		t.Fatalf("push %T", img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }
