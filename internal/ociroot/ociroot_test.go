package ociroot

import (
	"archive/tar"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/internal/ocitest"
)

type E = ocitest.Entry

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// transport is the test's own, its idle connections closed at the end,
// so that goleak judges the pulls' goroutines alone.
func transport(t *testing.T) http.RoundTripper {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// pull resolves and flattens ref into a fresh folder.
func pull(t *testing.T, ref string, o Options) (string, *Flattened, error) {
	t.Helper()
	o.PlainHTTP = true
	o.Transport = transport(t)
	im, err := Resolve(context.Background(), ref, o)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(t.TempDir(), "rootfs")
	f, err := im.Flatten(context.Background(), dir, []string{"proc", "dev", "tmp", "home/sandbox"})
	return dir, f, err
}

// TestFlattenLayers: layers apply in order, whiteouts and opaque folders
// remove what earlier layers put, modes lose setuid and gain read, the
// image's run configuration is read, and mount points are real folders.
func TestFlattenLayers(t *testing.T) {
	reg := ocitest.NewRegistry(t, "")
	cfg := v1.Config{Entrypoint: []string{"/bin/server"}, Cmd: []string{"--stdio"}, Env: []string{"PATH=/bin", "MODE=image"},
		WorkingDir: "/srv", User: "root"}
	img := ocitest.Image(t, cfg,
		ocitest.Layer(t, E{Name: "a/x", Body: []byte("x")}, E{Name: "a/y", Body: []byte("y")}, E{Name: "b/", Type: tar.TypeDir, Mode: 0o700},
			E{Name: "b/z", Body: []byte("z")}, E{Name: "bin/server", Body: []byte("old"), Mode: 0o4755}, E{Name: "tmp", Type: tar.TypeSymlink, Linkname: "/var/tmp"},
			E{Name: "secret", Body: []byte("s"), Mode: 0o600}),
		ocitest.Layer(t, E{Name: "a/.wh.x"}, E{Name: "b/.wh..wh..opq"}, E{Name: "b/new", Body: []byte("n")},
			E{Name: "./bin/server", Body: []byte("new"), Mode: 0o755}, E{Name: "bin/sh", Type: tar.TypeSymlink, Linkname: "/bin/server"},
			E{Name: "bin/hard", Type: tar.TypeLink, Linkname: "/bin/server"}))
	d := reg.Push(t, "acme/flat", "1.0", img)
	dir, f, err := pull(t, reg.Host+"/acme/flat:1.0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Digest != d.String() || !slices.Equal(f.Config.Entrypoint, cfg.Entrypoint) || !slices.Equal(f.Config.Cmd, cfg.Cmd) ||
		!slices.Equal(f.Config.Env, cfg.Env) || f.Config.WorkingDir != "/srv" || f.Config.User != "root" {
		t.Errorf("flattened %+v, want digest %s and config %+v", f, d, cfg)
	}
	for _, tc := range []struct {
		path, body string
		mode       os.FileMode // 0: absent
	}{
		{"a/x", "", 0}, {"a/y", "y", 0o644}, {"b/z", "", 0}, {"b/new", "n", 0o644}, {"bin/server", "new", 0o755},
		{"secret", "s", 0o644}, {"bin/hard", "new", 0o755},
	} {
		st, err := os.Lstat(filepath.Join(dir, tc.path))
		switch {
		case tc.mode == 0 && err == nil:
			t.Errorf("%s exists; a whiteout should have removed it", tc.path)
		case tc.mode == 0:
		case err != nil:
			t.Errorf("%s: %v", tc.path, err)
		case st.Mode() != tc.mode:
			t.Errorf("%s: mode %v, want %v", tc.path, st.Mode(), tc.mode)
		default:
			if b, _ := os.ReadFile(filepath.Join(dir, tc.path)); string(b) != tc.body {
				t.Errorf("%s holds %q, want %q", tc.path, b, tc.body)
			}
		}
	}
	if l, err := os.Readlink(filepath.Join(dir, "bin/sh")); err != nil || l != "/bin/server" {
		t.Errorf("bin/sh -> %q (%v)", l, err)
	}
	for _, p := range []string{"tmp", "proc", "dev", "home/sandbox", "b", "srv"} {
		if st, err := os.Lstat(filepath.Join(dir, p)); err != nil || !st.IsDir() || st.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v %v, want a folder 0755", p, st, err)
		}
	}
	// A reference by digest pins the same image.
	_, g, err := pull(t, reg.Host+"/acme/flat@"+d.String(), Options{})
	if err != nil || g.Digest != d.String() {
		t.Errorf("by digest: %+v %v", g, err)
	}
}

// TestFlattenHostile: no entry of a layer reaches outside the root, and
// a layer bomb stops at the bound.
func TestFlattenHostile(t *testing.T) {
	reg := ocitest.NewRegistry(t, "")
	outside := t.TempDir()
	rel := func(dir string) string { // a link from the root up to outside
		return strings.Repeat("../", 12) + strings.TrimPrefix(outside, "/")
	}
	for _, tc := range []struct {
		name    string
		layers  [][]E
		max     int64
		want    error
		skipped int
	}{
		{name: "dotdot", layers: [][]E{{{Name: "../../../../../../../../" + strings.TrimPrefix(outside, "/") + "/pwn", Body: []byte("x")}}}, want: ErrEscape},
		{name: "dotdot-inner", layers: [][]E{{{Name: "a/../../pwn", Body: []byte("x")}}}, want: ErrEscape},
		{name: "abs-symlink", layers: [][]E{{{Name: "abs", Type: tar.TypeSymlink, Linkname: outside}, {Name: "abs/pwn", Body: []byte("x")}}}, want: ErrEscape},
		{name: "rel-symlink", layers: [][]E{{{Name: "esc", Type: tar.TypeSymlink, Linkname: rel("")}}, {{Name: "esc/pwn", Body: []byte("x")}}}, want: ErrEscape},
		{name: "symlink-dir-whiteout", layers: [][]E{{{Name: "esc", Type: tar.TypeSymlink, Linkname: outside}}, {{Name: "esc/.wh.keep"}}}, want: ErrEscape},
		{name: "hardlink-up", layers: [][]E{{{Name: "h", Type: tar.TypeLink, Linkname: "../../../../etc/passwd"}}}, want: ErrEscape},
		{name: "hardlink-through-symlink", layers: [][]E{{{Name: "l", Type: tar.TypeSymlink, Linkname: outside}, {Name: "h", Type: tar.TypeLink, Linkname: "l/keep"}}}, want: ErrEscape},
		{name: "devices", layers: [][]E{{{Name: "dev/sda", Type: tar.TypeBlock}, {Name: "mem", Type: tar.TypeChar}, {Name: "fifo", Type: tar.TypeFifo}, {Name: "ok", Body: []byte("ok")}}}, skipped: 3},
		{name: "bomb", layers: [][]E{{{Name: "zeros", Zeros: 256 << 20}}}, max: 8 << 20, want: ErrTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(filepath.Join(outside, "keep"), []byte("keep"), 0o644)
			var layers []v1Layer
			for _, l := range tc.layers {
				layers = append(layers, ocitest.Layer(t, l...))
			}
			reg.Push(t, "hostile/"+tc.name, "1", ocitest.Image(t, v1.Config{}, layers...))
			dir, f, err := pull(t, reg.Host+"/hostile/"+tc.name+":1", Options{MaxBytes: tc.max})
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Fatalf("%v, want %v", err, tc.want)
			}
			ents, _ := os.ReadDir(outside)
			if len(ents) != 1 {
				t.Errorf("outside the root: %v", ents)
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "keep")); string(b) != "keep" {
				t.Errorf("a file outside the root was changed: %q", b)
			}
			if tc.want == nil {
				if f.Skipped != tc.skipped {
					t.Errorf("skipped %d, want %d", f.Skipped, tc.skipped)
				}
				for _, p := range []string{"dev/sda", "mem", "fifo"} {
					if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
						t.Errorf("%s was made", p)
					}
				}
			}
		})
	}
}

type v1Layer = v1.Layer

// TestPullPlatformTokenAndDigest: the image for this machine's platform
// is picked from an index, through the token flow, and a blob that does
// not match its digest fails the pull.
func TestPullPlatformTokenAndDigest(t *testing.T) {
	reg := ocitest.NewRegistry(t, "anonymous-token")
	mine := ocitest.Image(t, v1.Config{Cmd: []string{"mine"}}, ocitest.Layer(t, E{Name: "arch", Body: []byte(runtime.GOARCH)}))
	other := ocitest.Image(t, v1.Config{Cmd: []string{"other"}}, ocitest.Layer(t, E{Name: "arch", Body: []byte("other")}))
	idx := ocitest.Index(ocitest.ForPlatform{Platform: v1.Platform{OS: "linux", Architecture: "s390x"}, Image: other},
		ocitest.ForPlatform{Platform: v1.Platform{OS: "linux", Architecture: runtime.GOARCH}, Image: mine})
	id := reg.Push(t, "acme/multi", "2.0", idx)
	dir, f, err := pull(t, reg.Host+"/acme/multi:2.0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := mine.Digest()
	if b, _ := os.ReadFile(filepath.Join(dir, "arch")); string(b) != runtime.GOARCH || f.Digest != md.String() || f.Config.Cmd[0] != "mine" {
		t.Errorf("picked %q (%s, %v), want this machine's image %s", b, f.Digest, f.Config.Cmd, md)
	}
	if reg.Tokens() == 0 {
		t.Error("no token was asked for")
	}
	im, err := Resolve(context.Background(), reg.Host+"/acme/multi:2.0", Options{PlainHTTP: true, Transport: transport(t)})
	if err != nil || im.Digest != id.String() {
		t.Errorf("resolved %+v %v, want the index %s", im, err, id)
	}

	layers, _ := mine.Layers()
	ld, _ := layers[0].Digest()
	reg.Corrupt(ld)
	if _, _, err := pull(t, reg.Host+"/acme/multi:2.0", Options{}); err == nil || !strings.Contains(err.Error(), "layer 1") {
		t.Errorf("a corrupt blob: %v, want the pull to fail", err)
	}
}

// TestPlainHTTP: a registry reached over plain HTTP needs PlainHTTP and a
// loopback address.
func TestPlainHTTP(t *testing.T) {
	for _, tc := range []struct {
		ref   string
		plain bool
		ok    bool
	}{
		{"127.0.0.1:1/x:1", false, false}, {"10.0.0.1:5000/x:1", true, false}, {"localhost:5000/x@sha256:" + strings.Repeat("0", 64), true, true},
		{"ghcr.io/x", true, false},
	} {
		_, err := Resolve(context.Background(), tc.ref, Options{PlainHTTP: tc.plain})
		if (err == nil) != tc.ok || (!tc.ok && tc.ref != "ghcr.io/x" && !errors.Is(err, ErrPlainHTTP)) {
			t.Errorf("%s (plain %v): %v", tc.ref, tc.plain, err)
		}
	}
}
