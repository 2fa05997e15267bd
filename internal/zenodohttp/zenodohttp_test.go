package zenodohttp

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 10, 13, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-5", 0},
		{"120", 2 * time.Minute},
		{" 3 ", 3 * time.Second},
		{"Tue, 13 Oct 2026 12:00:30 GMT", 30 * time.Second},
		{"Tue, 13 Oct 2026 11:00:00 GMT", 0},
		{"soon", 0},
		{"99999999999999", 24 * time.Hour},
	} {
		if got := ParseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestPolicyDo: Retry-After lengthens the wait, progress restores the
// budget, a failure that is not Retryable ends at once, and a spent budget
// says how many retries it made.
func TestPolicyDo(t *testing.T) {
	retry := func(after time.Duration) error { return &Retryable{Err: errors.New("503"), After: after} }
	for _, tc := range []struct {
		name     string
		retries  int
		results  []error
		progress bool
		waits    []time.Duration
		wantErr  string
	}{
		{"succeeds after two", 3, []error{retry(0), retry(5 * time.Second), nil}, false, []time.Duration{time.Second, 5 * time.Second}, ""},
		{"not retryable", 3, []error{errors.New("401")}, false, nil, "401"},
		{"budget spent", 1, []error{retry(0), retry(0)}, false, []time.Duration{time.Second}, "giving up after 1 retry: 503"},
		{"progress restores the budget", 1, []error{retry(0), retry(0), retry(0), nil}, true, []time.Duration{time.Second, time.Second, time.Second}, ""},
		{"too long a Retry-After", 3, []error{retry(time.Hour)}, false, nil, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var waits []time.Duration
			p := Policy{Retries: tc.retries, Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			i := 0
			err := p.Do(context.Background(), "x", func() (bool, error) {
				r := tc.results[i]
				i++
				return tc.progress, r
			})
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if len(waits) != len(tc.waits) {
				t.Fatalf("waits %v, want %v", waits, tc.waits)
			}
			for j := range waits {
				if waits[j] != tc.waits[j] {
					t.Errorf("waits %v, want %v", waits, tc.waits)
				}
			}
		})
	}
}

// TestAuthorize: the token goes to the base URL's origin only.
func TestAuthorize(t *testing.T) {
	for _, tc := range []struct {
		base, to string
		ok       bool
	}{
		{"https://zenodo.org", "https://zenodo.org/api/files/b/x", true},
		{"https://zenodo.org/", "https://ZENODO.org:443/api", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/files/b", true},
		{"https://zenodo.org", "https://files.zenodo.org/b", false},
		{"https://zenodo.org", "http://zenodo.org/api", false},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8081/files/b", false},
		{"https://zenodo.org", "https://zenodo.org.evil.example/api", false},
	} {
		u, _ := url.Parse(tc.to)
		req := &http.Request{URL: u, Header: http.Header{}}
		err := Authorize(req, tc.base, "tok")
		var oe *OriginError
		if tc.ok != (err == nil) || (!tc.ok && !errors.As(err, &oe)) {
			t.Errorf("%s to %s: err %v, want ok=%v", tc.base, tc.to, err, tc.ok)
		}
		if got := req.Header.Get("Authorization") != ""; got != tc.ok {
			t.Errorf("%s to %s: token attached %v", tc.base, tc.to, got)
		}
	}
}

// TestText: a server's text is one line, bounded, with no raw controls.
func TestText(t *testing.T) {
	got := Text("a\x1b]0;t\x07\n  b" + strings.Repeat("é", 400))
	if strings.ContainsAny(got, "\x1b\x07\n") || len(got) > MaxText+len("…")+8*4 || !strings.HasPrefix(got, `a\x1b]0;t\a b`) {
		t.Errorf("Text = %q", got)
	}
}
