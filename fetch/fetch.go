// Package fetch downloads Zenodo records safely: it asks the records API for
// each record's files (a concept record's newest version, when a concept is
// asked for), downloads every file to DEST/<key> through DEST/<key>.part with
// HTTP Range resume, verifies size and MD5 on the same pass that writes the
// bytes, and renames a record's files into place together only once all of
// them verify.
//
// Everything the server sends is untrusted: file names with control or
// format characters are refused, and names, URLs and statuses are quoted in
// every message. A redirect to anything but http or https, or a redirect
// loop, is a permanent error.
//
// Without explicit records it fetches the two records of the frozen census
// snapshot and holds the API's metadata to the published pins, so a record
// that no longer matches the paper fails before a byte is downloaded.
//
// Transient failures (connection errors, stalls, 429, 5xx) are retried with
// exponential backoff, honouring Retry-After; a 404 or any other 4xx stops at
// once. A file whose bytes fail the MD5 check is an error and its .part file
// is removed, because resuming on top of wrong bytes can never verify. An
// existing DEST/<key> that does not verify is downloaded again and replaced
// only once the new copy verifies.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodohttp"
)

// DefaultBaseURL is the Zenodo instance asked when Options.BaseURL is empty.
const DefaultBaseURL = "https://zenodo.org"

// Defaults applied when the corresponding Options field is zero.
const (
	// DefaultRetries is the default Options.Retries.
	DefaultRetries = 5
	// DefaultTimeout is the default Options.Timeout.
	DefaultTimeout = 60 * time.Second
)

// MaxRetryAfter bounds how long a Retry-After header may make a run wait. A
// server asking for longer is reported as an error, so that a run never hangs
// silently for hours.
const MaxRetryAfter = zenodohttp.MaxRetryAfter

// Errors that callers may test with errors.Is.
var (
	// ErrRecordChanged: a record's API metadata no longer matches a pin.
	ErrRecordChanged = errors.New("the record changed")
	// ErrChecksum: downloaded bytes do not match the record's size or MD5.
	ErrChecksum = errors.New("download does not verify")
)

// Options configure Download. The zero value, apart from Dest, fetches the
// frozen snapshot from zenodo.org with the default policy.
type Options struct {
	// Dest is the directory the files are written to; it is created if needed.
	Dest string
	// Records are the Zenodo record IDs to fetch, in any form ParseRecordID
	// accepts. Empty means the records of the pinned snapshot.
	Records []string
	// Pins are held against the API metadata of every record they name,
	// whether it was chosen explicitly or by default. Nil means SnapshotPins().
	Pins []Pin
	// BaseURL is the Zenodo instance; empty means DefaultBaseURL.
	BaseURL string
	// Retries bounds consecutive failed attempts per request after the first.
	// An attempt that extends a partial file further than before resets the
	// count, so a long download over a flaky link completes while a server
	// that never makes progress is given up on. Zero (or negative) means
	// DefaultRetries, as everywhere in the project; NoRetries turns them off.
	Retries int
	// NoRetries makes the first failure of each request final.
	NoRetries bool
	// Timeout is how long to wait for a server to accept a connection, answer
	// a request, or send more bytes before the attempt is abandoned and
	// retried. It is not a limit on a whole download, which may take hours.
	// Zero (or negative) means DefaultTimeout; NoTimeout turns it off.
	Timeout time.Duration
	// NoTimeout waits for a silent server for ever.
	NoTimeout bool
	// Backoff returns the wait before retry n (1-based). Nil means
	// DefaultBackoff. A Retry-After header lengthens the wait, never shortens it.
	Backoff func(retry int) time.Duration
	// Sleep waits between attempts and must return early with ctx's error.
	// Nil means a timer; replacing it lets a caller observe or shorten waits.
	Sleep func(ctx context.Context, d time.Duration) error
	// HTTPClient makes the requests. Nil means a private client whose idle
	// connections are closed when Download returns.
	HTTPClient *http.Client
	// UserAgent is sent with every request; empty means DefaultUserAgent().
	UserAgent string
	// Progress, if set, is told each file's transfer, from the goroutine
	// that called Download, one file at a time: Task is the file's key,
	// Done its bytes on disk of Total (Done goes down when a server
	// ignores a range request and the file restarts from zero); a last
	// report says the file verified (Done == Total) or failed (Failed 1).
	// A file found complete gets only the last report.
	Progress progress.Func
	// Logger receives one-line notices such as retries and restarts; nil
	// discards them.
	Logger *slog.Logger
}

// File is one file of a record as the records API lists it.
type File struct {
	// Record is the ID of the record version the file belongs to: when a
	// concept record was asked for, the newest version Zenodo answered with.
	Record string
	// Concept is the concept record ID of all the record's versions, as the
	// records API gives it; empty when it gives none.
	Concept string
	// Key is the file name; it is checked to be a plain name.
	Key string
	// Size is the length in bytes.
	Size int64
	// MD5 is the lower-case hex digest.
	MD5 string
	// URL is the absolute download URL (links.self resolved against the API URL).
	URL string
}

// Result describes a file that Download verified, or tried to.
type Result struct {
	File
	// Path is DEST/<key>; it holds verified bytes once the file's record
	// is committed, which every result Download returns has been.
	Path string
	// Skipped reports that Path was already complete and verified, so nothing
	// was downloaded.
	Skipped bool
	// Resumed is how many bytes of an earlier partial download were kept.
	Resumed int64
	// Transferred is how many bytes were received in this run.
	Transferred int64
	// Elapsed is the wall time spent on the file, including verification.
	Elapsed time.Duration
}

// DefaultUserAgent names the program, its version and where to find it, as
// Zenodo asks of API clients (it refuses anonymous ones).
func DefaultUserAgent() string {
	v := buildinfo.Read().Version
	return "atlas-reproduce/" + strings.ReplaceAll(v, " ", "_") + " (+" + ProjectURL + ")"
}

// ProjectURL is where the program lives, sent in the User-Agent.
const ProjectURL = "https://github.com/atlas-reproduce/atlas-reproduce"

// StatusError is an HTTP answer that is neither success nor redirect.
// Statuses 429 and 5xx are retried and reach the caller only once retries
// are spent; any other 4xx is returned at once.
type StatusError struct {
	// Method and URL identify the request (after redirects, the last one).
	Method string
	URL    string
	// StatusCode and Status are the answer's, e.g. 404 and "404 Not Found".
	StatusCode int
	Status     string
}

// Error names the request and the status.
func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %q: server answered %q", e.Method, e.URL, e.Status)
}

// Download fetches every file of every record in opts and returns one Result
// per file, in record order then API order. All records' metadata is read and
// checked against the pins before any file is downloaded. The files of one
// record are put in place together, as one set, once every one of them
// verifies; a second Download into the same Dest is refused meanwhile
// (*outset.LockedError). It stops at the first failure, returning the results
// of the records already in place with the error; a partial file is kept as
// DEST/<key>.part for the next run unless its bytes were found to be wrong or
// it is empty.
func Download(ctx context.Context, opts Options) ([]Result, error) {
	if opts.Dest == "" {
		return nil, errors.New("no destination directory")
	}
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	defer c.close()

	ids := opts.Records
	if len(ids) == 0 {
		ids = SnapshotRecordIDs()
	}
	pins := opts.Pins
	if pins == nil {
		pins = SnapshotPins()
	}
	records, err := c.resolve(ctx, ids, pins)
	if err != nil {
		return nil, err
	}

	set, err := outset.Open(opts.Dest)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	var results []Result
	for _, rec := range records {
		rs, err := c.fetchRecord(ctx, set, rec)
		if err != nil {
			return results, err
		}
		results = append(results, rs...)
	}
	return results, nil
}

// resolve reads every record's metadata, resolving concept IDs to versions,
// and holds it to the pins.
func (c *client) resolve(ctx context.Context, ids []string, pins []Pin) ([]*record, error) {
	var records []*record
	seenAsked := map[string]bool{}
	seenVersion := map[string]bool{}
	seenKey := map[string]string{}
	for _, raw := range ids {
		id, err := ParseRecordID(raw)
		if err != nil {
			return nil, err
		}
		if seenAsked[id] {
			continue
		}
		seenAsked[id] = true
		rec, err := c.record(ctx, id)
		if err != nil {
			return nil, err
		}
		if rec.Version != id {
			c.logf("record %s is a concept record; Zenodo answers with its newest version, record %s, which is the one fetched", id, rec.Version)
		}
		if err := checkPins(rec, pins); err != nil {
			return nil, err
		}
		if seenVersion[rec.Version] {
			continue
		}
		seenVersion[rec.Version] = true
		for _, f := range rec.Files {
			// Two records may not write the same name: the second would
			// silently replace the first in DEST.
			if other, dup := seenKey[strings.ToLower(f.Key)]; dup {
				return nil, fmt.Errorf("record %s: file %q clashes with a file of record %s in the destination directory", rec.Version, f.Key, other)
			}
			seenKey[strings.ToLower(f.Key)] = rec.Version
		}
		records = append(records, rec)
	}
	return records, nil
}

// fetchRecord brings every file of rec to its .part, verified, then commits
// them into place as one set.
func (c *client) fetchRecord(ctx context.Context, set *outset.Set, rec *record) ([]Result, error) {
	results := make([]Result, 0, len(rec.Files))
	for _, f := range rec.Files {
		r, err := c.file(ctx, set, f, filepath.Join(set.Dir(), f.Key))
		if err != nil {
			c.progress.Tell(progress.Report{Task: f.Key, Total: f.Size, Failed: 1})
		} else {
			c.progress.Tell(progress.Report{Task: f.Key, Done: f.Size, Total: f.Size})
			c.logf("%s", summary(r))
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("record %s: %q: %w", f.Record, f.Key, err)
		}
		results = append(results, r)
	}
	if err := set.Commit(); err != nil {
		return nil, fmt.Errorf("record %s: %w", rec.Version, err)
	}
	return results, nil
}

// Snapshot downloads the frozen census snapshot (the records of SnapshotPins,
// held to those pins) into opts.Dest: the one call a caller needs to obtain
// the published archives. opts.Records and opts.Pins are ignored; the other
// fields apply as in Download.
func Snapshot(ctx context.Context, opts Options) ([]Result, error) {
	opts.Records = nil
	opts.Pins = nil
	return Download(ctx, opts)
}

// Paths returns the Path of each result, in order.
func Paths(results []Result) []string {
	ps := make([]string, len(results))
	for i, r := range results {
		ps[i] = r.Path
	}
	return ps
}
