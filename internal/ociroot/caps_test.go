package ociroot

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/atlas-reproduce/atlas-reproduce/internal/ocitest"
)

// endless writes spaces (a JSON document's leading whitespace, as long as
// the reader keeps reading) until the client goes away.
func endless(w http.ResponseWriter, r *http.Request, contentType string) {
	w.Header().Set("Content-Type", contentType)
	buf := []byte(strings.Repeat(" ", 32<<10))
	for r.Context().Err() == nil {
		if _, err := w.Write(buf); err != nil {
			return
		}
	}
}

// countingTransport keeps the most bytes the pull read of one body.
type countingTransport struct {
	rt  http.RoundTripper
	max *atomic.Int64
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, max: c.max}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n   int64
	max *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	for {
		m := b.max.Load()
		if b.n <= m || b.max.CompareAndSwap(m, b.n) {
			return n, err
		}
	}
}

// TestRegistryDocumentCaps: each document a registry sends is read to a
// small fixed cap, whatever it streams: a manifest named by a tag, an
// image's manifest under an index, the ping's answer, a config blob, a
// token. Each is served as an endless stream by a registry that is
// otherwise real, and the pull reads no more than the cap and a little.
// A layer that declares no size is refused before its blob is asked for.
func TestRegistryDocumentCaps(t *testing.T) {
	var mode atomic.Value // the case being served
	mode.Store("")
	var tokenAsked atomic.Bool
	var configDigest, unsizedManifest atomic.Value
	configDigest.Store("-")
	// A layer that declares no size (-1), and whose blob never ends.
	unsizedLayer := "sha256:" + strings.Repeat("ab", 32)
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := mode.Load().(string)
		p := r.URL.Path
		switch {
		case m == "ping" && p == "/v2/":
			endless(w, r, "application/json")
			return
		case m == "token" && p == "/token":
			tokenAsked.Store(true)
			endless(w, r, "application/json")
			return
		case m == "token" && r.Header.Get("Authorization") == "":
			w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+r.Host+`/token",service="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
			return
		case m == "manifest" && strings.Contains(p, "/manifests/") && r.Method == http.MethodHead:
			http.NotFound(w, r) // the GET that follows is what counts
			return
		case m == "manifest" && strings.Contains(p, "/manifests/"):
			endless(w, r, "application/vnd.oci.image.manifest.v1+json")
			return
		case m == "index" && strings.Contains(p, "/manifests/sha256:"):
			endless(w, r, "application/vnd.oci.image.manifest.v1+json")
			return
		case m == "unsized" && strings.Contains(p, "/manifests/") && r.Method == http.MethodHead:
			http.NotFound(w, r)
			return
		case m == "unsized" && strings.Contains(p, "/manifests/"):
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			io.WriteString(w, unsizedManifest.Load().(string))
			return
		case m == "unsized" && strings.HasSuffix(p, "/blobs/"+unsizedLayer):
			// Empty gzip members without end: no byte comes out of
			// them for the bounds on the layer's stream to count.
			var member bytes.Buffer
			gzip.NewWriter(&member).Close()
			for r.Context().Err() == nil {
				if _, err := w.Write(bytes.Repeat(member.Bytes(), 1024)); err != nil {
					return
				}
			}
			return
		case m == "config" && strings.Contains(p, "/blobs/") && r.Method == http.MethodGet && strings.HasSuffix(p, configDigest.Load().(string)):
			endless(w, r, "application/octet-stream")
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")

	img := ocitest.Image(t, v1.Config{Cmd: []string{"x"}}, ocitest.Layer(t, E{Name: "f", Body: []byte("f")}))
	cd, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	configDigest.Store(cd.String())
	im, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	unsizedManifest.Store(fmt.Sprintf(`{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
  "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": %q, "size": %d},
  "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": %q, "size": -1}]}`,
		cd.String(), im.Config.Size, unsizedLayer))
	idx := ocitest.Index(ocitest.ForPlatform{Platform: HostPlatform(), Image: img})
	for tag, x := range map[string]any{"img": img, "idx": idx} {
		ref, _ := name.NewTag(host + "/caps/x:" + tag)
		var err error
		if i, ok := x.(v1.Image); ok {
			err = remote.Write(ref, i)
		} else {
			err = remote.WriteIndex(ref, x.(v1.ImageIndex))
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		mode, tag string
		cap       int64
		want      error // nil: the pull goes on, the endless part only drained to its cap
		wantText  string
	}{
		{mode: "manifest", tag: "img", cap: MaxManifest, want: ErrDocumentTooBig},
		{mode: "index", tag: "idx", cap: MaxManifest, want: ErrDocumentTooBig},
		{mode: "ping", tag: "img", cap: maxPing},
		{mode: "config", tag: "img", cap: maxConfig, wantText: "config"},
		{mode: "token", tag: "img", cap: 64 << 10, wantText: "65536"},
		{mode: "unsized", tag: "img", cap: 64 << 10, wantText: "declares a size of -1"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			mode.Store(tc.mode)
			var read atomic.Int64
			o := Options{PlainHTTP: true, Transport: countingTransport{transport(t), &read}}
			dir := filepath.Join(t.TempDir(), "rootfs")
			// An answer drained without a cap would hold the pull
			// forever: the deadline makes that a failure, not a hang.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			im, err := Resolve(ctx, host+"/caps/x:"+tc.tag, o)
			if err == nil {
				_, err = im.Flatten(ctx, dir, nil)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("the pull was still reading after 30 s: %v", err)
			}
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("err = %v, want %v", err, tc.want)
			case tc.wantText != "" && (err == nil || !strings.Contains(err.Error(), tc.wantText)):
				t.Errorf("err = %v, want an error about the %s", err, tc.wantText)
			case tc.want == nil && tc.wantText == "" && err != nil:
				t.Errorf("err = %v, want the pull to go on past the drained answer", err)
			}
			t.Logf("%s: %v", tc.mode, err)
			// The cap, and a buffer's worth more at most.
			if n := read.Load(); n > tc.cap+32<<10 {
				t.Errorf("the pull read %d bytes of one body; the cap is %d", n, tc.cap)
			}
			if tc.mode == "token" && !tokenAsked.Load() {
				t.Error("no token was asked for")
			}
		})
	}
}
