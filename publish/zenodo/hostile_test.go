package zenodo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodohttp"
	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodotest"
)

// TestTokenStaysWithItsOrigin: a deposition whose bucket link names
// another origin gets no upload and no token; the deposit fails saying so.
func TestTokenStaysWithItsOrigin(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the token reached %s", r.URL)
		}
		w.Write([]byte(`{"checksum":"md5:x"}`))
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":7,"links":{"bucket":%q}}`, other.URL+"/files/b")
	}))
	defer api.Close()
	dir, names := files(t, "a.zip", "zip bytes")
	c := &Client{BaseURL: api.URL, Token: token, HTTP: api.Client(), Retries: -1}
	_, err := c.Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta})
	var oe *zenodohttp.OriginError
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "refusing to send the access token") {
		t.Fatalf("err = %v, want an origin refusal", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("the error shows the token: %v", err)
	}
}

// TestErrorTextIsTerminalSafe: what Zenodo says in a refusal reaches the
// error without its escape sequences and bounded in length.
func TestErrorTextIsTerminalSafe(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"message":"bad\u001b]0;owned\u0007\u001b[2J%s","errors":[{"field":"f\u001b[31m","message":"m"}]}`, strings.Repeat("x", 5000))
	}))
	defer api.Close()
	dir, names := files(t, "a.zip", "zip bytes")
	c := &Client{BaseURL: api.URL, Token: token, HTTP: api.Client(), Retries: -1}
	_, err := c.Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta})
	if err == nil {
		t.Fatal("a refusal was taken for success")
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\x07") {
		t.Errorf("raw control characters reach the terminal: %q", msg)
	}
	if len(msg) > 2*zenodohttp.MaxText+500 {
		t.Errorf("the error quotes %d bytes of the server's text", len(msg))
	}
	if !strings.Contains(msg, `bad\x1b]0;owned`) {
		t.Errorf("the server's message is not shown escaped: %q", msg)
	}
}

// TestUploadIsWhatWasVerified: a file changed after its verification is
// not uploaded: its bytes are hashed as they are sent and the request
// fails before its last byte.
func TestUploadIsWhatWasVerified(t *testing.T) {
	z := zenodotest.New(t, token)
	dir, names := files(t, "a.zip", "zip bytes", "report.json", `{"tools": 1}`)
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	verified := map[string]string{"a.zip": sum("zip bytes"), "report.json": sum(`{"tools": 1}`)}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), []byte(`{"tools": 9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := client(t, z, nil)
	c.Retries = -1
	_, err := c.Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta, SHA256: verified})
	if err == nil || !strings.Contains(err.Error(), "changed since it was verified") {
		t.Fatalf("err = %v, want the changed file refused", err)
	}
	m := regexp.MustCompile(`--draft (\d+)`).FindStringSubmatch(err.Error())
	if m == nil || z.Get(m[1]) == nil {
		t.Fatalf("the error names no draft: %v", err)
	}
	for _, f := range z.Get(m[1]).Files {
		if f.Key == "report.json" {
			t.Errorf("deposition %s holds report.json %q: the changed bytes were uploaded", m[1], f.Data)
		}
	}
}

// TestDefaultTransportHasTimeouts: the client used when none is given
// bounds connecting, the TLS handshake and the wait for an answer.
func TestDefaultTransportHasTimeouts(t *testing.T) {
	tr, ok := (&Client{}).httpClient().Transport.(*http.Transport)
	if !ok {
		t.Fatal("the default client has no *http.Transport")
	}
	if tr.ResponseHeaderTimeout <= 0 || tr.TLSHandshakeTimeout <= 0 || tr.DialContext == nil {
		t.Errorf("transport without timeouts: header %v, TLS %v", tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout)
	}
}
