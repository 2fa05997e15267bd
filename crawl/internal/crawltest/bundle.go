// Package crawltest holds the fixtures the tests of the crawl, the probe
// and the runners share: imported by tests only.
package crawltest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
)

// BundleFile is one file of an MCPB bundle: its path in the zip, its
// bytes and its mode (0: 0644).
type BundleFile struct {
	Name string
	Body []byte
	Mode os.FileMode
}

// MakeBundle is the zip of files, as an MCPB bundle is published.
func MakeBundle(t testing.TB, files ...BundleFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.Body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// BundleSum is the SHA-256 of b, hex, as an entry's fileSha256 names it.
func BundleSum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
