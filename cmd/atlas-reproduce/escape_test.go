package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestScanEscapesServerText: a server's JSON-RPC error text, holding an
// OSC 52 clipboard write, a title change and a clear screen, reaches the
// terminal escaped.
func TestScanEscapesServerText(t *testing.T) {
	const hostile = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\u009b31m"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		w.Header().Set("Content-Type", "application/json")
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"error": map[string]any{"code": -32603, "message": hostile, "data": hostile}})
	}))
	defer srv.Close()
	stdout, stderr, code := run(t, "", "scan", "--timeout", "20s", srv.URL)
	if code == 0 {
		t.Fatalf("scan of a failing server exited 0: %s", stderr)
	}
	for _, c := range []string{"\x1b", "\x07", "\u009b"} {
		if strings.Contains(stdout+stderr, c) {
			t.Errorf("a raw %q reached the terminal: %q", c, stderr)
		}
	}
	if !strings.Contains(stderr, `\x1b]52`) {
		t.Errorf("the server's text is not shown escaped: %q", stderr)
	}
}
