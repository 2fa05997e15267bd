package fetch

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Pin is what a publication says one file of a record must be.
type Pin struct {
	// Record is the Zenodo record ID.
	Record string
	// Key is the file name within the record.
	Key string
	// Size is the length in bytes, or -1 when it was not published.
	Size int64
	// MD5 is the lower-case hex digest.
	MD5 string
}

// snapshotPins are the Zenodo files of the frozen census (snapshot
// 2026-10-12) as the specification's "Frozen Snapshot and Reproducibility"
// section publishes them. The baseline archive's size is not published.
var snapshotPins = []Pin{
	{Record: "23333514", Key: "mcp-atlas-milestone-a-baseline-20261013.zip", Size: -1, MD5: "9d383214877ad5c06749995e67a893f5"},
	{Record: "23333516", Key: "mcp-atlas-audit-20261013-public.zip", Size: 11044763, MD5: "a22741da7be8622cdaf1783afa91e225"},
}

// SnapshotPins returns a copy of the pinned files of the frozen census
// snapshot.
func SnapshotPins() []Pin { return append([]Pin(nil), snapshotPins...) }

// SnapshotRecordIDs returns the record IDs of the frozen census snapshot, in
// the order they are fetched by default.
func SnapshotRecordIDs() []string {
	ids := make([]string, len(snapshotPins))
	for i, p := range snapshotPins {
		ids[i] = p.Record
	}
	return ids
}

var recordIDForms = []*regexp.Regexp{
	regexp.MustCompile(`^([0-9]+)$`),
	regexp.MustCompile(`^(?i)(?:(?:https?://)?(?:dx\.)?doi\.org/|doi:)?10\.5281/zenodo\.([0-9]+)$`),
	regexp.MustCompile(`^(?i)(?:https?://)?(?:[a-z0-9.-]+\.)?zenodo\.org/(?:api/)?records?/([0-9]+)/?$`),
}

// ParseRecordID accepts a Zenodo record as a bare ID ("23333516"), a DOI
// ("10.5281/zenodo.23333516", optionally as a doi.org URL) or a record page
// URL ("https://zenodo.org/records/23333516"), and returns the bare ID. Only
// digits come back, so the ID is safe to put in a URL path.
func ParseRecordID(s string) (string, error) {
	t := strings.TrimSpace(s)
	for _, re := range recordIDForms {
		if m := re.FindStringSubmatch(t); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("%q is not a Zenodo record ID, DOI (10.5281/zenodo.N) or record URL", s)
}

// recordsAPIURL is where the records API describes record id.
func recordsAPIURL(base, id string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(base, "/") + "/api/records/" + id)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %w", base, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("base URL %q is not http or https", base)
	}
	return u, nil
}

// apiRecord is the part of a records API answer that matters here.
type apiRecord struct {
	Files []struct {
		Key      string `json:"key"`
		Size     *int64 `json:"size"`
		Checksum string `json:"checksum"`
		Links    struct {
			Self string `json:"self"`
		} `json:"links"`
	} `json:"files"`
}

// maxAPIBody bounds a records API answer: real ones are a few tens of KB, and
// a runaway answer should not be read into memory.
const maxAPIBody = 32 << 20

// record asks the records API for record id and returns its files.
func (c *client) record(ctx context.Context, id string) ([]File, error) {
	api, err := recordsAPIURL(c.base, id)
	if err != nil {
		return nil, err
	}
	var body []byte
	err = c.retry(ctx, "record "+id, func() (bool, error) {
		b, err := c.getAPI(ctx, api.String())
		body = b
		return false, err
	})
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusGone) {
			return nil, fmt.Errorf("record %s: no such record on %s: %w", id, c.base, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("record %s: %w", id, err)
	}
	return parseRecord(id, api, body)
}

// getAPI is one attempt at reading a records API answer.
func (c *client) getAPI(ctx context.Context, u string) ([]byte, error) {
	actx, kick, stop := c.watchdog(ctx)
	defer stop()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.netError(ctx, actx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(req, resp)
	}
	body, err := io.ReadAll(io.LimitReader(kickReader{resp.Body, kick}, maxAPIBody+1))
	if err != nil {
		return nil, c.netError(ctx, actx, err)
	}
	if len(body) > maxAPIBody {
		return nil, fmt.Errorf("GET %s: answer larger than %d bytes", u, maxAPIBody)
	}
	return body, nil
}

// parseRecord turns a records API answer into files with absolute URLs and
// checks everything later steps rely on: a safe file name, a size and an MD5.
func parseRecord(id string, api *url.URL, body []byte) ([]File, error) {
	var rec apiRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, fmt.Errorf("record %s: the records API answer at %s is not the expected JSON: %w", id, api, err)
	}
	if len(rec.Files) == 0 {
		return nil, fmt.Errorf("record %s: the records API lists no files (a restricted or metadata-only record?)", id)
	}
	files := make([]File, 0, len(rec.Files))
	for i, af := range rec.Files {
		if err := checkKey(af.Key); err != nil {
			return nil, fmt.Errorf("record %s: file %d: %w", id, i, err)
		}
		if af.Size == nil || *af.Size < 0 {
			return nil, fmt.Errorf("record %s: %s: the records API gives no size", id, af.Key)
		}
		sum, err := parseMD5(af.Checksum)
		if err != nil {
			return nil, fmt.Errorf("record %s: %s: %w", id, af.Key, err)
		}
		if af.Links.Self == "" {
			return nil, fmt.Errorf("record %s: %s: the records API gives no links.self download URL", id, af.Key)
		}
		link, err := url.Parse(af.Links.Self)
		if err != nil {
			return nil, fmt.Errorf("record %s: %s: download URL: %w", id, af.Key, err)
		}
		u := api.ResolveReference(link)
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("record %s: %s: download URL %q is not http or https", id, af.Key, u)
		}
		files = append(files, File{Record: id, Key: af.Key, Size: *af.Size, MD5: sum, URL: u.String()})
	}
	return files, nil
}

// checkKey refuses file names that would escape DEST or mean something else
// on another system: the key comes from the network and becomes a path.
func checkKey(k string) error {
	switch {
	case k == "":
		return errors.New("empty file name")
	case k == "." || k == "..":
		return fmt.Errorf("file name %q is not a plain name", k)
	case strings.ContainsAny(k, "/\\\x00"):
		return fmt.Errorf("file name %q contains a path separator or NUL", k)
	case strings.ContainsAny(k, "\n\r\t"):
		return fmt.Errorf("file name %q contains a control character", k)
	case strings.HasSuffix(k, ".part"):
		// NAME.part is how a partial NAME is stored.
		return fmt.Errorf("file name %q ends in .part, which is reserved for partial downloads", k)
	}
	return nil
}

// parseMD5 reads a records API checksum, "md5:<32 hex digits>".
func parseMD5(s string) (string, error) {
	alg, sum, ok := strings.Cut(s, ":")
	if !ok || !strings.EqualFold(alg, "md5") {
		return "", fmt.Errorf("the records API gives no MD5 checksum (got %q), so the download could not be verified", s)
	}
	sum = strings.ToLower(sum)
	if b, err := hex.DecodeString(sum); err != nil || len(b) != 16 {
		return "", fmt.Errorf("the records API checksum %q is not an MD5 digest", s)
	}
	return sum, nil
}

// checkPins holds a record's files to every pin that names the record.
func checkPins(id string, files []File, pins []Pin) error {
	for _, p := range pins {
		pid, err := ParseRecordID(p.Record)
		if err != nil || pid != id {
			continue
		}
		var f *File
		for i := range files {
			if files[i].Key == p.Key {
				f = &files[i]
				break
			}
		}
		if f == nil {
			return fmt.Errorf("record %s: %w: it no longer lists %s", id, ErrRecordChanged, p.Key)
		}
		if !strings.EqualFold(f.MD5, p.MD5) {
			return fmt.Errorf("record %s: %s: %w: the records API gives MD5 %s, the published pin is %s", id, p.Key, ErrRecordChanged, f.MD5, strings.ToLower(p.MD5))
		}
		if p.Size >= 0 && f.Size != p.Size {
			return fmt.Errorf("record %s: %s: %w: the records API gives %d bytes, the published pin is %d", id, p.Key, ErrRecordChanged, f.Size, p.Size)
		}
	}
	return nil
}
