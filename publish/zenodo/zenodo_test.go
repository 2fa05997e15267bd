package zenodo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodotest"
)

const token = "tok-5ecret-value"

var meta = json.RawMessage(`{"upload_type":"dataset","title":"t","creators":[{"name":"A"}],"description":"d","publication_date":"2026-12-01"}`)

// files writes name=content files into a new folder.
func files(t *testing.T, kv ...string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for i := 0; i < len(kv); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, kv[i]), []byte(kv[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, kv[i])
	}
	return dir, names
}

func client(t *testing.T, z *zenodotest.Server, log *bytes.Buffer) *Client {
	hc := z.Client()
	t.Cleanup(hc.CloseIdleConnections)
	c := &Client{BaseURL: z.URL, Token: z.Token, HTTP: hc, Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}
	if log != nil {
		c.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	return c
}

func keys(d *zenodotest.Deposition) map[string]string {
	m := map[string]string{}
	for _, f := range d.Files {
		m[f.Key] = string(f.Data)
	}
	return m
}

func TestNewDepositionIsLeftADraft(t *testing.T) {
	z := zenodotest.New(t, token)
	dir, names := files(t, "a.zip", "zip bytes", "SHA256SUMS", "sums")
	d, err := client(t, z, nil).Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta})
	if err != nil {
		t.Fatal(err)
	}
	got := z.Get(d.ID)
	if got == nil || got.Published || d.Published {
		t.Fatalf("deposition %s: %+v, want an unpublished draft", d.ID, got)
	}
	if k := keys(got); k["a.zip"] != "zip bytes" || k["SHA256SUMS"] != "sums" || len(k) != 2 {
		t.Errorf("bucket holds %v", k)
	}
	if d.DOI != zenodotest.DOI(d.ID) {
		t.Errorf("DOI %q, want the reserved %q", d.DOI, zenodotest.DOI(d.ID))
	}
	if !strings.Contains(string(got.Metadata), `"title":"t"`) {
		t.Errorf("metadata %s", got.Metadata)
	}
}

func TestNewVersionOfAConcept(t *testing.T) {
	for _, legacyRefuses := range []bool{false, true} {
		t.Run(map[bool]string{false: "deposition API", true: "records API versions"}[legacyRefuses], func(t *testing.T) {
			z := zenodotest.New(t, token)
			z.LegacyNewVersionRefused = legacyRefuses
			var log bytes.Buffer
			c := client(t, z, &log)
			dir1, names1 := files(t, "r-20261001.zip", "first", "SHA256SUMS", "same", "old-only.txt", "x")
			v1, err := c.Deposit(context.Background(), Upload{Dir: dir1, Files: names1, Metadata: meta, Publish: true})
			if err != nil {
				t.Fatal(err)
			}
			if !v1.Published || z.Latest(v1.Concept) != v1.ID {
				t.Fatalf("first version %+v not published as the concept's latest", v1)
			}
			dir2, names2 := files(t, "r-20261101.zip", "second", "SHA256SUMS", "same")
			v2, err := c.Deposit(context.Background(), Upload{Dir: dir2, Files: names2, Metadata: meta, Concept: v1.Concept, Publish: true})
			if err != nil {
				t.Fatal(err)
			}
			if v2.ID == v1.ID || z.Latest(v1.Concept) != v2.ID {
				t.Fatalf("new version %s; the concept's latest is %s", v2.ID, z.Latest(v1.Concept))
			}
			// The inherited files that are not the new release's are gone;
			// the one with the same bytes is kept, not sent again.
			if k := keys(z.Get(v2.ID)); len(k) != 2 || k["r-20261101.zip"] != "second" || k["SHA256SUMS"] != "same" {
				t.Errorf("new version holds %v", k)
			}
			if !slices.Equal(v2.Kept, []string{"SHA256SUMS"}) || !slices.Equal(v2.Uploaded, []string{"r-20261101.zip"}) {
				t.Errorf("kept %v, uploaded %v", v2.Kept, v2.Uploaded)
			}
			if k := keys(z.Get(v1.ID)); k["old-only.txt"] != "x" {
				t.Errorf("the first version changed: %v", k)
			}
			said := strings.Contains(log.String(), "legacy deposition API refused")
			if said != legacyRefuses {
				t.Errorf("log says the legacy API refused: %v, want %v\n%s", said, legacyRefuses, log.String())
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(*zenodotest.Server, *Client, *Upload)
		status int
		want   []string
	}{
		{"wrong token", func(z *zenodotest.Server, c *Client, u *Upload) { c.Token = "tok-wrong-5ecret" }, http.StatusUnauthorized, []string{"token was refused"}},
		{"file too large", func(z *zenodotest.Server, c *Client, u *Upload) { z.MaxFileSize = 4 }, http.StatusRequestEntityTooLarge, []string{"larger than Zenodo accepts", "--draft"}},
		{"invalid metadata", func(z *zenodotest.Server, c *Client, u *Upload) {
			u.Metadata = json.RawMessage(`{"upload_type":"dataset"}`)
		}, http.StatusBadRequest,
			[]string{"metadata.title: Missing data for required field.", "metadata.creators: Missing data"}},
		{"second new version", func(z *zenodotest.Server, c *Client, u *Upload) {
			dir, names := files(t, "first.zip", "v1")
			v1, err := c.Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta, Publish: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta, Concept: v1.Concept}); err != nil {
				t.Fatal(err)
			}
			u.Concept = v1.Concept
		}, http.StatusConflict, []string{"a new version draft already exists", "finish or discard the open draft"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := zenodotest.New(t, token)
			var log bytes.Buffer
			c := client(t, z, &log)
			dir, names := files(t, "big.zip", "more than four bytes")
			u := Upload{Dir: dir, Files: names, Metadata: meta}
			tc.setup(z, c, &u)
			_, err := c.Deposit(context.Background(), u)
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tc.status {
				t.Fatalf("error %v, want an API refusal %d", err, tc.status)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			for _, secret := range []string{token, c.Token} {
				if strings.Contains(err.Error(), secret) || strings.Contains(log.String(), secret) {
					t.Errorf("the token is in the error or the log")
				}
			}
		})
	}
}

func TestDroppedUploadRetriedAndResumed(t *testing.T) {
	t.Run("retried", func(t *testing.T) {
		z := zenodotest.New(t, token)
		z.DropUploads("b.zip", 2)
		dir, names := files(t, "a.txt", "aaaa", "b.zip", strings.Repeat("b", 4096))
		d, err := client(t, z, nil).Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
		if k := keys(z.Get(d.ID)); k["b.zip"] != strings.Repeat("b", 4096) {
			t.Errorf("bucket holds %d bytes of b.zip", len(k["b.zip"]))
		}
	})
	t.Run("resumed", func(t *testing.T) {
		z := zenodotest.New(t, token)
		z.DropUploads("b.zip", 1)
		dir, names := files(t, "a.txt", "aaaa", "b.zip", strings.Repeat("b", 4096), "c.txt", "cc")
		c := client(t, z, nil)
		c.Retries = -1
		_, err := c.Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta})
		if err == nil || !strings.Contains(err.Error(), "--draft ") {
			t.Fatalf("error %v, want one that says how to resume", err)
		}
		id := strings.Fields(err.Error()[strings.Index(err.Error(), "--draft ")+len("--draft "):])[0]
		if k := keys(z.Get(id)); len(k) != 1 || k["a.txt"] != "aaaa" {
			t.Fatalf("draft %s holds %v before the resume", id, k)
		}
		d, err := c.Deposit(context.Background(), Upload{Dir: dir, Files: names, Metadata: meta, Draft: id, Publish: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != id || !slices.Equal(d.Kept, []string{"a.txt"}) || !slices.Equal(d.Uploaded, []string{"b.zip", "c.txt"}) {
			t.Errorf("resumed %s: kept %v, uploaded %v", d.ID, d.Kept, d.Uploaded)
		}
		if !d.Published || len(keys(z.Get(id))) != 3 {
			t.Errorf("resumed draft not published whole: %v", keys(z.Get(id)))
		}
		for _, r := range z.Requests() {
			if r == "POST /api/deposit/depositions" && d.ID != id {
				t.Errorf("resume made a new deposition")
			}
		}
	})
}
