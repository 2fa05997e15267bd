package labelpage

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// sharedSample is the bundled first part of the shared labelled sample.
var sharedSample = filepath.Join("..", "testdata", "shared-sample")

func newServer(t *testing.T) (*Server, *sample.Sample, string) {
	t.Helper()
	s, err := sample.Read(sharedSample)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "labels-T.jsonl")
	srv, err := New(s, "T", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, s, path
}

// TestBlindAndSaved holds the page's session to its promises without a
// browser: the state names no rule class nor stratum, an answer is on disk
// when the request returns, a later answer replaces an earlier one, and a
// new session on the same file resumes with them.
func TestBlindAndSaved(t *testing.T) {
	srv, s, path := newServer(t)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	res, err := http.Get(ts.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, leak := range []string{`"rule"`, `"stratum"`, "gg:", "pos:"} {
		if strings.Contains(string(body), leak) {
			t.Errorf("the page's state holds %s: not blind", leak)
		}
	}
	post := func(body string) int {
		t.Helper()
		r, err := http.Post(ts.URL+"/answer", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	id0, id1 := s.Items[0].ID, s.Items[1].ID
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{"id": ` + strconv.Itoa(id0) + `, "money": true}`, http.StatusNoContent},
		{`{"id": ` + strconv.Itoa(id1) + `, "url": true}`, http.StatusNoContent},
		{`{"id": ` + strconv.Itoa(id0) + `, "credential": true}`, http.StatusNoContent},
		{`{"id": 99999, "url": true}`, http.StatusBadRequest},
		{`{"id": 1, "rule": ["x"]}`, http.StatusBadRequest},
	} {
		if code := post(tc.body); code != tc.code {
			t.Errorf("POST %s: %d, want %d", tc.body, code, tc.code)
		}
	}
	r, err := sample.ReadLabels(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Labels) != 2 || !r.Labels[id0].Credential || r.Labels[id0].Money || !r.Labels[id1].URL {
		t.Errorf("labels on disk %+v", r.Labels)
	}
	again, err := New(s, "T", path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Answered() != 2 {
		t.Errorf("a new session resumes with %d answers, want 2", again.Answered())
	}
}

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// TestPageInChromium drives the page in headless Chromium: answer with the
// keys, go back and correct, reload and resume where the answers stop.
func TestPageInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		testenv.Missing(t, "%s is missing (%v): install the Debian package chromium to drive the labelling page", chromiumPath, err)
	}
	srv, s, path := newServer(t)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Env("HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_CACHE_HOME="+dir))
	// A generous bound: on a loaded machine Chromium alone can take tens
	// of seconds to start; it only ends a hung run.
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	progress := func() string {
		t.Helper()
		p, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#progress")))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// waitProgress waits until the progress line says want: a saved
	// answer moves it only after the server has the line on disk.
	waitProgress := func(want string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			p := progress()
			if strings.HasPrefix(p, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("progress %q, want %q", p, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	key := func(k string) {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
	}
	checked := func(class string) bool {
		t.Helper()
		on, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.querySelector("#class-`+class+` input").checked`))
		if err != nil {
			t.Fatal(err)
		}
		return on
	}
	shown := func() string {
		t.Helper()
		p, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#property")))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		t.Fatal(err)
	}
	n := len(s.Items)
	waitProgress("Item 1 of " + strconv.Itoa(n) + " · 0 answered")
	if shown() != s.Items[0].Property {
		t.Fatalf("first item shows %q, want %q", shown(), s.Items[0].Property)
	}
	page, err := chromedp.Run(bctx, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page, "gg:") || strings.Contains(page, "pos:") {
		t.Error("the page shows the rules' classes or the strata")
	}
	// Item 1: credential and url; item 2: none.
	key("1")
	key("5")
	key("\r")
	waitProgress("Item 2 of " + strconv.Itoa(n) + " · 1 answered")
	key("\r")
	waitProgress("Item 3 of " + strconv.Itoa(n) + " · 2 answered")
	// Back to item 2: its answer (none) is shown; correct it to command.
	key(kb.ArrowLeft)
	waitProgress("Item 2 of")
	if shown() != s.Items[1].Property || checked("command") || checked("credential") {
		t.Fatalf("back shows %q with command %v", shown(), checked("command"))
	}
	key("3")
	key("\r")
	waitProgress("Item 3 of " + strconv.Itoa(n) + " · 2 answered")
	// Back twice: item 1 keeps its two classes.
	key(kb.ArrowLeft)
	key(kb.ArrowLeft)
	waitProgress("Item 1 of")
	if !checked("credential") || !checked("url") || checked("money") {
		t.Error("item 1 does not show its saved answer")
	}
	// Reload: the page resumes at the first unanswered item.
	if err := chromedp.Do(bctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		t.Fatal(err)
	}
	waitProgress("Item 3 of " + strconv.Itoa(n) + " · 2 answered")
	r, err := sample.ReadLabels(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Labels[s.Items[0].ID], r.Labels[s.Items[1].ID]
	if len(r.Labels) != 2 || !a.Credential || !a.URL || a.Money || a.Filesystem || a.Command || !b.Command || b.Credential || b.URL {
		t.Errorf("labels on disk: %+v", r.Labels)
	}
}
