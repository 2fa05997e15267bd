// Package zenodo uploads a deposit to Zenodo through its deposition API:
// a new deposition, or a new version of a concept record (the latest
// version looked up, the files the new draft inherits removed); the files
// into the deposition's bucket; the metadata; and, when asked, publication.
//
// Zenodo runs on InvenioRDM, whose legacy deposition API refuses some
// steps; where it refuses to make a new version, the records API's
// versions endpoint is asked instead and the refusal is said plainly.
//
// The access token is sent in the Authorization header only, and only to
// the origin of BaseURL: a bucket or draft link to another origin is
// refused (internal/zenodohttp). It never appears in an error, a log line
// or a file: every message that could carry a server's echo of it is
// scrubbed. What is uploaded is hashed as it is sent and held to the
// SHA-256 the deposit was verified against.
package zenodo

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodohttp"
)

// Client talks to one Zenodo instance with one token.
type Client struct {
	// BaseURL is the instance, e.g. https://zenodo.org or
	// https://sandbox.zenodo.org.
	BaseURL string
	// Token is the personal access token (scopes deposit:write, and
	// deposit:actions to publish).
	Token string
	// HTTP makes the requests; nil means a client with a timeout on every
	// phase before the body (zenodohttp.Transport) and none overall
	// (uploads may take hours).
	HTTP *http.Client
	// Retries bounds the retries of a request after a connection error,
	// 429 or 5xx; zero means DefaultRetries, negative none.
	Retries int
	// Sleep waits between attempts and returns early with ctx's error;
	// nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives one line per step; nil discards them.
	Logger *slog.Logger
	// UserAgent is sent with every request.
	UserAgent string
}

// DefaultRetries is the retries of a request when Client.Retries is zero.
const DefaultRetries = 4

// Upload is what to deposit.
type Upload struct {
	// Dir holds the files; Files are their names, uploaded in this order.
	Dir   string
	Files []string
	// Metadata is the deposition's metadata (.zenodo.json's content).
	Metadata json.RawMessage
	// Concept, when set, makes the deposit a new version of that concept
	// record (or of the record whose versions it is).
	Concept string
	// Draft, when set, resumes an unpublished deposition made before: the
	// files already in its bucket with the right MD5 are kept.
	Draft string
	// Publish publishes the deposition; otherwise it is left a draft.
	Publish bool
	// SHA256, when it names a file, is the SHA-256 its bytes were
	// verified against: the upload hashes what it sends and fails,
	// before the last byte goes, when the file changed since.
	SHA256 map[string]string
}

// Deposited is the outcome of Deposit.
type Deposited struct {
	// ID is the deposition's (and the record's) id.
	ID string
	// DOI is the record's DOI: reserved for a draft, registered once
	// published.
	DOI string
	// Concept is the concept record id of all its versions.
	Concept string
	// Published says whether it was published.
	Published bool
	// Uploaded are the files sent; Kept those already in the bucket with
	// the right MD5.
	Uploaded, Kept []string
	// HTML is the deposition's page.
	HTML string
}

// APIError is a refusal by the API, with what the server said.
type APIError struct {
	Method, URL string
	Status      int
	// Message is the server's message; Fields the validation errors, as
	// "field: message".
	Message string
	Fields  []string
	// Step says what was being done.
	Step string
}

// Error says what was refused, why, and what to do.
func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s: %s %s: %d %s", e.Step, e.Method, e.URL, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if len(e.Fields) > 0 {
		msg += " (" + strings.Join(e.Fields, "; ") + ")"
	}
	switch e.Status {
	case http.StatusUnauthorized:
		msg += ": the token was refused: check that the variable holds a valid Zenodo personal access token for this instance"
	case http.StatusForbidden:
		msg += ": the token may not do this: it needs the deposit:write scope (and deposit:actions to publish), and the deposition must be its owner's"
	case http.StatusConflict:
		msg += ": the deposition is in a state that forbids this (a new-version draft already open, or the record being published or locked): finish or discard the open draft on Zenodo, or resume it with --draft"
	case http.StatusRequestEntityTooLarge:
		msg += ": the file is larger than Zenodo accepts (per file or the record's quota)"
	}
	return msg
}

// Deposit uploads u and returns the deposition. After a failure past
// the deposition's creation the error names it, so that the upload can
// be resumed with Upload.Draft.
func (c *Client) Deposit(ctx context.Context, u Upload) (*Deposited, error) {
	if c.Token == "" {
		return nil, errors.New("no Zenodo access token")
	}
	if bu, err := url.Parse(c.BaseURL); err != nil || (bu.Scheme != "http" && bu.Scheme != "https") || bu.Host == "" {
		return nil, fmt.Errorf("the Zenodo URL %q is not an http(s) URL", c.BaseURL)
	}
	sums := make(map[string]string, len(u.Files))
	for _, f := range u.Files {
		s, err := openreg.Sum(filepath.Join(u.Dir, f), md5.New())
		if err != nil {
			return nil, err
		}
		sums[f] = s
	}
	dep, err := c.draft(ctx, u)
	if err != nil {
		return nil, c.scrub(err)
	}
	out, err := c.fill(ctx, dep, u, sums)
	if err != nil {
		return nil, c.scrub(fmt.Errorf("%w\nthe draft deposition %s is kept: run again with --draft %s to resume it (files already uploaded are kept)", err, dep.ID, dep.ID))
	}
	return out, nil
}

// deposition is the part of a deposition the client uses.
type deposition struct {
	ID           json.Number `json:"id"`
	ConceptRecID string      `json:"conceptrecid"`
	DOI          string      `json:"doi"`
	State        string      `json:"state"`
	Submitted    bool        `json:"submitted"`
	Metadata     struct {
		PrereserveDOI struct {
			DOI string `json:"doi"`
		} `json:"prereserve_doi"`
	} `json:"metadata"`
	Links struct {
		Bucket      string `json:"bucket"`
		LatestDraft string `json:"latest_draft"`
		HTML        string `json:"html"`
	} `json:"links"`
	Files []struct {
		ID       string `json:"id"`
		Filename string `json:"filename"`
		Checksum string `json:"checksum"`
	} `json:"files"`
}

func (c *Client) api(p string) string { return strings.TrimRight(c.BaseURL, "/") + p }

// draft opens the deposition to fill: the one to resume, a new version of
// the concept's latest record, or a new one.
func (c *Client) draft(ctx context.Context, u Upload) (*deposition, error) {
	switch {
	case u.Draft != "":
		var d deposition
		if err := c.call(ctx, "resume the draft "+u.Draft, http.MethodGet, c.api("/api/deposit/depositions/"+url.PathEscape(u.Draft)), nil, &d); err != nil {
			return nil, err
		}
		if d.Submitted || d.State == "done" {
			return nil, fmt.Errorf("deposition %s is already published: a published record's files cannot change; make a new version with --concept", u.Draft)
		}
		return &d, nil
	case u.Concept != "":
		return c.newVersion(ctx, u.Concept)
	}
	var d deposition
	if err := c.call(ctx, "create a deposition", http.MethodPost, c.api("/api/deposit/depositions"), []byte("{}"), &d); err != nil {
		return nil, err
	}
	c.logf("created deposition %s", d.ID)
	return &d, nil
}

// newVersion opens a new-version draft of the concept's latest record.
func (c *Client) newVersion(ctx context.Context, concept string) (*deposition, error) {
	var rec struct {
		ID           json.Number `json:"id"`
		ConceptRecID string      `json:"conceptrecid"`
	}
	// The records API answers a concept id with its latest version.
	if err := c.call(ctx, "look up the latest version of record "+concept, http.MethodGet, c.api("/api/records/"+url.PathEscape(concept)), nil, &rec); err != nil {
		return nil, err
	}
	latest := rec.ID.String()
	if latest == "" {
		return nil, fmt.Errorf("record %s: the records API gives no id for its latest version", concept)
	}
	c.logf("record %s: latest version %s", concept, latest)
	var d deposition
	err := c.call(ctx, "make a new version of record "+latest, http.MethodPost, c.api("/api/deposit/depositions/"+latest+"/actions/newversion"), nil, &d)
	var ae *APIError
	if errors.As(err, &ae) && refusedStep(ae.Status) {
		c.logf("the legacy deposition API refused to make a new version of record %s (%d %s); asking the records API's versions endpoint instead", latest, ae.Status, http.StatusText(ae.Status))
		var draft struct {
			ID json.Number `json:"id"`
		}
		if err2 := c.call(ctx, "make a new version of record "+latest+" through the records API", http.MethodPost, c.api("/api/records/"+latest+"/versions"), nil, &draft); err2 != nil {
			return nil, fmt.Errorf("the legacy deposition API refused the new version (%v), and so did the records API: %w", err, err2)
		}
		var nd deposition
		if err := c.call(ctx, "open the new version's draft "+draft.ID.String(), http.MethodGet, c.api("/api/deposit/depositions/"+draft.ID.String()), nil, &nd); err != nil {
			return nil, err
		}
		return &nd, nil
	}
	if err != nil {
		return nil, err
	}
	if d.Links.LatestDraft == "" {
		return nil, fmt.Errorf("record %s: the new-version answer links no latest_draft", latest)
	}
	var nd deposition
	if err := c.call(ctx, "open the new version's draft", http.MethodGet, d.Links.LatestDraft, nil, &nd); err != nil {
		return nil, err
	}
	c.logf("new version of record %s: draft %s", latest, nd.ID)
	return &nd, nil
}

// refusedStep is a status by which the legacy API says it does not do a
// step (as opposed to refusing the caller).
func refusedStep(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusGone, http.StatusNotImplemented:
		return true
	}
	return false
}

// fill makes the draft's files those of u (removing the inherited ones
// and any that differ, keeping those already right), sets the metadata,
// and publishes when asked.
func (c *Client) fill(ctx context.Context, d *deposition, u Upload, sums map[string]string) (*Deposited, error) {
	id := d.ID.String()
	if d.Links.Bucket == "" {
		return nil, fmt.Errorf("deposition %s: the API gives no bucket link (the deposition API's files need one)", id)
	}
	out := &Deposited{ID: id, Concept: d.ConceptRecID, HTML: d.Links.HTML, DOI: d.Metadata.PrereserveDOI.DOI}
	have := map[string]bool{}
	for _, f := range d.Files {
		want, ours := sums[f.Filename]
		if ours && strings.EqualFold(strings.TrimPrefix(f.Checksum, "md5:"), want) {
			have[f.Filename] = true
			out.Kept = append(out.Kept, f.Filename)
			continue
		}
		if err := c.call(ctx, fmt.Sprintf("remove the inherited file %q", f.Filename), http.MethodDelete, c.api("/api/deposit/depositions/"+id+"/files/"+url.PathEscape(f.ID)), nil, nil); err != nil {
			return nil, err
		}
		c.logf("deposition %s: removed %q", id, f.Filename)
	}
	for _, name := range u.Files {
		if have[name] {
			continue
		}
		if err := c.put(ctx, d.Links.Bucket, filepath.Join(u.Dir, name), name, u.SHA256[name]); err != nil {
			return nil, err
		}
		out.Uploaded = append(out.Uploaded, name)
		c.logf("deposition %s: uploaded %q", id, name)
	}
	body, err := json.Marshal(struct {
		Metadata json.RawMessage `json:"metadata"`
	}{u.Metadata})
	if err != nil {
		return nil, err
	}
	var md deposition
	if err := c.call(ctx, "set the metadata", http.MethodPut, c.api("/api/deposit/depositions/"+id), body, &md); err != nil {
		return nil, err
	}
	if md.Metadata.PrereserveDOI.DOI != "" {
		out.DOI = md.Metadata.PrereserveDOI.DOI
	}
	if !u.Publish {
		return out, nil
	}
	var pub deposition
	if err := c.call(ctx, "publish", http.MethodPost, c.api("/api/deposit/depositions/"+id+"/actions/publish"), nil, &pub); err != nil {
		return nil, err
	}
	out.Published = true
	if pub.DOI != "" {
		out.DOI = pub.DOI
	}
	if pub.ConceptRecID != "" {
		out.Concept = pub.ConceptRecID
	}
	return out, nil
}

// put uploads a file into the bucket, hashing what it sends: the bytes
// must have the SHA-256 they were verified against (sha, when given) or
// the request fails before its last byte, and the bucket must give back
// the MD5 of the bytes sent. A dropped upload is sent again from its start.
func (c *Client) put(ctx context.Context, bucket, path, name, sha string) error {
	u := strings.TrimRight(bucket, "/") + "/" + url.PathEscape(name)
	var got struct {
		Checksum string `json:"checksum"`
		Size     int64  `json:"size"`
	}
	var sent *hashingFile
	err := c.do(ctx, "upload "+strconv.Quote(name), http.MethodPut, u, func() (io.ReadCloser, int64, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, 0, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		sent = &hashingFile{f: f, name: path, sha: sha, size: fi.Size(), md5: md5.New(), sha256: sha256.New()}
		return sent, fi.Size(), nil
	}, &got)
	if err != nil {
		return err
	}
	if sent == nil || !sent.done {
		return fmt.Errorf("upload %q: the bucket answered before the whole file was sent", name)
	}
	md5sum := hex.EncodeToString(sent.md5.Sum(nil))
	if !strings.EqualFold(strings.TrimPrefix(got.Checksum, "md5:"), md5sum) {
		return fmt.Errorf("upload %q: the bucket holds MD5 %q, the bytes sent have %s", name, zenodohttp.Text(got.Checksum), md5sum)
	}
	return nil
}

// hashingFile is an upload's body: the file's bytes, hashed as they are
// read. When a read brings the last of the size the request announced, the
// bytes so far are held to the SHA-256 they were verified against before
// that read is handed on: on a mismatch it hands on nothing and fails, so
// the request never carries its whole body and the server never completes
// an upload of changed bytes.
type hashingFile struct {
	f           *os.File
	name, sha   string
	size, read  int64
	md5, sha256 hash.Hash
	done        bool
}

func (h *hashingFile) Read(p []byte) (int, error) {
	n, err := h.f.Read(p)
	h.md5.Write(p[:n])
	h.sha256.Write(p[:n])
	h.read += int64(n)
	if h.read >= h.size && !h.done {
		if got := hex.EncodeToString(h.sha256.Sum(nil)); h.sha != "" && !strings.EqualFold(got, h.sha) {
			return 0, &changedError{name: h.name, want: h.sha, got: got}
		}
		h.done = h.read == h.size
	}
	return n, err
}

func (h *hashingFile) Close() error { return h.f.Close() }

// changedError is a file whose bytes changed between its verification and
// its upload.
type changedError struct{ name, want, got string }

func (e *changedError) Error() string {
	return fmt.Sprintf("%s changed since it was verified (SHA-256 %s, verified %s): its upload was stopped before its last byte", e.name, e.got, e.want)
}

// call is do with an in-memory body.
func (c *Client) call(ctx context.Context, step, method, u string, body []byte, out any) error {
	var open func() (io.ReadCloser, int64, error)
	if body != nil {
		open = func() (io.ReadCloser, int64, error) {
			return io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
		}
	}
	return c.do(ctx, step, method, u, open, out)
}

// do makes a request, retrying connection errors, 429 and 5xx by the one
// policy of internal/zenodohttp, and decodes a JSON answer into out.
func (c *Client) do(ctx context.Context, step, method, u string, open func() (io.ReadCloser, int64, error), out any) error {
	retries := c.Retries
	if retries == 0 {
		retries = DefaultRetries
	}
	p := zenodohttp.Policy{
		Retries: max(retries, 0),
		Backoff: backoff,
		Sleep:   c.Sleep,
		Notify: func(what string, err error, retry, of int, wait time.Duration) {
			c.logf("%s: %v; retry %d of %d in %v", what, err, retry, of, wait)
		},
	}
	return p.Do(ctx, step, func() (bool, error) {
		return false, c.once(ctx, step, method, u, open, out)
	})
}

// once makes one attempt; a failure another attempt may cure is a
// *zenodohttp.Retryable.
func (c *Client) once(ctx context.Context, step, method, u string, open func() (io.ReadCloser, int64, error), out any) error {
	var body io.ReadCloser
	var size int64
	if open != nil {
		var err error
		if body, size, err = open(); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return err
	}
	if err := zenodohttp.Authorize(req, c.BaseURL, c.Token); err != nil {
		if body != nil {
			body.Close()
		}
		return fmt.Errorf("%s: %w", step, err)
	}
	if body != nil {
		req.ContentLength = size
		if strings.Contains(step, "upload") {
			req.Header.Set("Content-Type", "application/octet-stream")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	req.Header.Set("Accept", "application/json")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		var ce *changedError
		var oe *zenodohttp.OriginError
		if errors.As(err, &ce) || errors.As(err, &oe) {
			return fmt.Errorf("%s: %w", step, err)
		}
		return &zenodohttp.Retryable{Err: fmt.Errorf("%s: %s %s: %w", step, method, u, err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return &zenodohttp.Retryable{Err: fmt.Errorf("%s: %s %s: reading the answer: %w", step, method, u, err)}
	}
	if resp.StatusCode >= 300 {
		ae := &APIError{Method: method, URL: u, Status: resp.StatusCode, Step: step}
		var e struct {
			Message string `json:"message"`
			Errors  []struct {
				Field    string   `json:"field"`
				Message  string   `json:"message"`
				Messages []string `json:"messages"`
			} `json:"errors"`
		}
		// What the server says is a stranger's text: bounded, one line,
		// no escape sequences (zenodohttp.Text).
		if json.Unmarshal(b, &e) == nil {
			ae.Message = zenodohttp.Text(e.Message)
			for _, fe := range e.Errors {
				m := fe.Message
				if m == "" {
					m = strings.Join(fe.Messages, ", ")
				}
				ae.Fields = append(ae.Fields, zenodohttp.Text(fe.Field+": "+m))
			}
		} else if len(b) > 0 {
			ae.Message = zenodohttp.Text(string(b))
		}
		if zenodohttp.RetryableStatus(resp.StatusCode) {
			return &zenodohttp.Retryable{Err: ae, After: zenodohttp.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
		}
		return ae
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s: %s %s: the answer is not the expected JSON: %w", step, method, u, err)
		}
	}
	return nil
}

// defaultHTTP is the client used when Client.HTTP is nil: a timeout on
// every phase before the body, and no redirect that would take the token
// to another origin.
var defaultHTTP = &http.Client{Transport: zenodohttp.Transport(), CheckRedirect: zenodohttp.SameOriginRedirects}

func (c *Client) httpClient() *http.Client {
	if c.HTTP == nil {
		return defaultHTTP
	}
	return c.HTTP
}

// backoff is the wait before the nth retry: 1s, doubling up to 64s.
func backoff(attempt int) time.Duration {
	return time.Second << min(attempt-1, 6)
}

func (c *Client) logf(format string, args ...any) {
	if c.Logger != nil {
		c.Logger.Info(c.redact(fmt.Sprintf(format, args...)))
	}
}

// scrub keeps the token out of an error, whatever a server echoed.
func (c *Client) scrub(err error) error {
	if err == nil || c.Token == "" || !strings.Contains(err.Error(), c.Token) {
		return err
	}
	return scrubbed{msg: c.redact(err.Error()), err: err}
}

func (c *Client) redact(s string) string {
	if c.Token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.Token, "[token]")
}

// scrubbed is an error whose text had the token taken out; errors.As
// still reaches the original's types.
type scrubbed struct {
	msg string
	err error
}

func (s scrubbed) Error() string { return s.msg }
func (s scrubbed) Unwrap() error { return s.err }
