package crawl

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
)

// testCA makes a CA and a certificate it signs for 127.0.0.1, and writes
// the CA's PEM to a file.
func testCA(t *testing.T) (caFile string, leaf tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "atlas test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		// npm names a registry at an IP address "localhost." to the TLS
		// check when it goes through a proxy.
		DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// connectProxy is the host's proxy of a machine that reaches the
// registry only through one: it tunnels CONNECTs and counts them.
func connectProxy(t *testing.T) (string, *atomic.Int64) {
	var n atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		n.Add(1)
		conn, buf, _ := w.(http.Hijacker).Hijack()
		conn.Write([]byte("HTTP/1.1 200 OK\r\n\r\n"))
		go func() { io.Copy(up, buf); up.Close() }()
		io.Copy(conn, up)
		conn.Close()
		up.Close()
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), &n
}

// TestNPMRegistryBehindTestCA: a registry whose certificate a test CA
// signs is reached by the sandboxed install when npm's config (cafile,
// or NODE_EXTRA_CA_CERTS, and https-proxy) says so, and fails the crawl
// at once, naming the certificate, when it does not.
func TestNPMRegistryBehindTestCA(t *testing.T) {
	npmtest.NeedSandbox(t)
	caFile, leaf := testCA(t)
	pkgs := []npmtest.Package{{Name: "tiny-tls", Version: "1.0.0", Prelude: "serve();"}}
	for _, tc := range []struct {
		name     string
		env      func(t *testing.T)
		viaProxy bool
		wantErr  string
	}{
		{name: "no CA", env: func(t *testing.T) {}, wantErr: "certificate"},
		{name: "cafile", env: func(t *testing.T) { t.Setenv("npm_config_cafile", caFile) }},
		{name: "NODE_EXTRA_CA_CERTS", env: func(t *testing.T) { t.Setenv("NODE_EXTRA_CA_CERTS", caFile) }},
		{name: "cafile and https-proxy", env: func(t *testing.T) { t.Setenv("npm_config_cafile", caFile) }, viaProxy: true},
		{name: "strict-ssl off", env: func(t *testing.T) { t.Setenv("npm_config_strict_ssl", "false") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, fetched := npmtest.RegistryTLS(t, pkgs, leaf)
			npmtest.Use(t, url)
			t.Setenv("NODE_EXTRA_CA_CERTS", "")
			tc.env(t)
			var tunnels *atomic.Int64
			if tc.viaProxy {
				var p string
				p, tunnels = connectProxy(t)
				t.Setenv("npm_config_https_proxy", p)
			}
			cands, err := ParseCandidates(strings.NewReader("npm:tiny-tls@1.0.0\n"), "list")
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{CandidateList: cands, Out: filepath.Join(t.TempDir(), "out"), AllowPrivate: true, OmitElapsed: true,
				Probe: probe.Options{Timeout: crawlTimeout, MaxBytes: 4 << 20}, Packages: runners.Options{Cache: crawltest.CacheDir(t)}}
			sum, err := Run(context.Background(), opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), url) {
					t.Fatalf("crawl: %+v, %v; want an error naming the %s and the registry", sum, err, tc.wantErr)
				}
				if fetched.Load() != 0 {
					t.Errorf("%d tarballs fetched before the failure", fetched.Load())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec := readServers(t, opt.Out)["npm:tiny-tls@1.0.0"]
			if sum.Reachable != 1 || fetched.Load() != 1 || len(rec.tools) == 0 {
				t.Fatalf("reachable %d, %d tarballs fetched, record %+v; want the server listed, its tarball fetched once", sum.Reachable, fetched.Load(), rec)
			}
			if tunnels != nil && tunnels.Load() == 0 {
				t.Error("the install did not go through the host's https-proxy")
			}
		})
	}
}
