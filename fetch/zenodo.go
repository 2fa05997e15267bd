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
	"unicode"
	"unicode/utf8"
)

// Pin is what a publication says one file of a record must be.
type Pin struct {
	// Record is the Zenodo record ID of the pinned version.
	Record string
	// Concept is the concept record ID of all the record's versions, empty
	// when not published. Fetching the concept (Zenodo answers with its
	// newest version) is held to the pin too, and fails when the newest
	// version is not Record.
	Concept string
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
	{Record: "23333514", Concept: "23333513", Key: "mcp-atlas-milestone-a-baseline-20261013.zip", Size: -1, MD5: "9d383214877ad5c06749995e67a893f5"},
	{Record: "23333516", Concept: "23333515", Key: "mcp-atlas-audit-20261013-public.zip", Size: 11044763, MD5: "a22741da7be8622cdaf1783afa91e225"},
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
	regexp.MustCompile(`^(?i)(?:(?:https?://)?(?:dx\.)?doi\.org/|doi:|(?:https?://)?(?:[a-z0-9.-]+\.)?zenodo\.org/doi/)?10\.5281/zenodo\.([0-9]+)/?$`),
	regexp.MustCompile(`^(?i)(?:https?://)?(?:[a-z0-9.-]+\.)?zenodo\.org/(?:api/)?records?/([0-9]+)/?$`),
}

// ParseRecordID accepts a Zenodo record as a bare ID ("23333516"), a DOI
// ("10.5281/zenodo.23333516", optionally as a doi.org URL or as Zenodo's own
// "https://zenodo.org/doi/10.5281/zenodo.23333516") or a record page URL
// ("https://zenodo.org/records/23333516"), and returns the bare ID. Only
// digits come back, so the ID is safe to put in a URL path. The ID may name a
// concept record, which Download resolves to its newest version.
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
	// ID is the version's record ID (a number in Zenodo's answers) and
	// ConceptRecID the concept's (a string); both are read as either.
	ID           json.RawMessage `json:"id"`
	ConceptRecID json.RawMessage `json:"conceptrecid"`
	Files        []struct {
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

// record is one record version as the records API describes it.
type record struct {
	// Asked is the ID the caller gave; Version the version answered, which
	// differs when Asked names a concept record; Concept the concept's ID
	// as the answer gives it (empty if it gives none).
	Asked, Version, Concept string
	Files                   []File
}

// record asks the records API for record id and returns its files. An id of
// a concept record is redirected by Zenodo to the newest version, which is
// what the files belong to and what the pins are checked against.
func (c *client) record(ctx context.Context, id string) (*record, error) {
	api, err := recordsAPIURL(c.base, id)
	if err != nil {
		return nil, err
	}
	var (
		body  []byte
		final *url.URL
	)
	err = c.retry(ctx, "record "+id, func() (bool, error) {
		b, u, err := c.getAPI(ctx, api.String())
		body, final = b, u
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
	return parseRecord(id, final, body)
}

// getAPI is one attempt at reading a records API answer; it returns the
// body and the URL that answered, which after a redirect is not the one asked.
func (c *client) getAPI(ctx context.Context, u string) ([]byte, *url.URL, error) {
	actx, kick, stop := c.watchdog(ctx)
	defer stop()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, c.netError(ctx, actx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, statusError(req, resp)
	}
	body, err := io.ReadAll(io.LimitReader(kickReader{resp.Body, kick}, maxAPIBody+1))
	if err != nil {
		return nil, nil, c.netError(ctx, actx, err)
	}
	if len(body) > maxAPIBody {
		return nil, nil, fmt.Errorf("GET %q: answer larger than %d bytes", u, maxAPIBody)
	}
	return body, resp.Request.URL, nil
}

// parseRecord turns a records API answer into files with absolute URLs and
// checks everything later steps rely on: a safe file name, a size and an MD5.
// api is the URL that answered.
func parseRecord(id string, api *url.URL, body []byte) (*record, error) {
	var rec apiRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, fmt.Errorf("record %s: the records API answer at %q is not the expected JSON: %w", id, api, err)
	}
	version, err := versionID(id, api, rec.ID)
	if err != nil {
		return nil, err
	}
	concept, _ := rawID(rec.ConceptRecID)
	r := &record{Asked: id, Version: version, Concept: concept}
	if len(rec.Files) == 0 {
		return nil, fmt.Errorf("record %s: the records API lists no files (a restricted or metadata-only record?)", version)
	}
	r.Files = make([]File, 0, len(rec.Files))
	for i, af := range rec.Files {
		if err := checkKey(af.Key); err != nil {
			return nil, fmt.Errorf("record %s: file %d: %w", version, i, err)
		}
		if af.Size == nil || *af.Size < 0 {
			return nil, fmt.Errorf("record %s: %q: the records API gives no size", version, af.Key)
		}
		sum, err := parseMD5(af.Checksum)
		if err != nil {
			return nil, fmt.Errorf("record %s: %q: %w", version, af.Key, err)
		}
		if af.Links.Self == "" {
			return nil, fmt.Errorf("record %s: %q: the records API gives no links.self download URL", version, af.Key)
		}
		link, err := url.Parse(af.Links.Self)
		if err != nil {
			return nil, fmt.Errorf("record %s: %q: download URL: %w", version, af.Key, err)
		}
		u := api.ResolveReference(link)
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("record %s: %q: download URL %q is not http or https", version, af.Key, u)
		}
		r.Files = append(r.Files, File{Record: version, Concept: concept, Key: af.Key, Size: *af.Size, MD5: sum, URL: u.String()})
	}
	return r, nil
}

// versionID is the ID of the version that answered: the answer's own "id",
// else the last path element of the URL that answered, else the ID asked.
func versionID(asked string, api *url.URL, raw json.RawMessage) (string, error) {
	if id, ok := rawID(raw); ok {
		return id, nil
	}
	if len(raw) > 0 && string(raw) != "null" {
		return "", fmt.Errorf("record %s: the records API gives an id that is not a record ID: %q", asked, string(raw))
	}
	if last := api.Path[strings.LastIndexByte(api.Path, '/')+1:]; last != "" {
		if id, err := ParseRecordID(last); err == nil {
			return id, nil
		}
	}
	return asked, nil
}

// rawID reads a record ID given as a JSON number or string of digits.
func rawID(raw json.RawMessage) (string, bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case float64:
		s = string(raw)
	default:
		return "", false
	}
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return "", false
	}
	return s, true
}

// checkKey refuses file names that would escape DEST, mean something else on
// another system, or act on a terminal when printed: the key comes from the
// network, becomes a path and is echoed.
func checkKey(k string) error {
	switch {
	case k == "":
		return errors.New("empty file name")
	case !utf8.ValidString(k):
		return fmt.Errorf("file name %q is not valid UTF-8", k)
	case k == "." || k == "..":
		return fmt.Errorf("file name %q is not a plain name", k)
	case strings.ContainsAny(k, "/\\\x00"):
		return fmt.Errorf("file name %q contains a path separator or NUL", k)
	case strings.IndexFunc(k, isControl) >= 0:
		return fmt.Errorf("file name %q contains a control character", k)
	case strings.HasPrefix(k, ".outset-"):
		return fmt.Errorf("file name %q is reserved for the destination folder's own files", k)
	case strings.HasSuffix(k, ".part"):
		// NAME.part is how a partial NAME is stored.
		return fmt.Errorf("file name %q ends in .part, which is reserved for partial downloads", k)
	}
	return nil
}

// isControl is true for C0 and C1 controls (ESC, BEL, CR, ...) and for format
// characters such as the bidirectional overrides, which reorder what a
// terminal shows.
func isControl(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
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

// checkPins holds a record version's files to every pin that names it: by
// the version's ID, by the ID the caller asked for, or by its concept. A pin
// reached through the concept that names another version fails: the newest
// version is not the published one, and its files are not what the pins
// describe.
func checkPins(r *record, pins []Pin) error {
	for _, p := range pins {
		pid, err := ParseRecordID(p.Record)
		if err != nil {
			continue
		}
		pconcept := ""
		if p.Concept != "" {
			pconcept, _ = ParseRecordID(p.Concept)
		}
		byVersion := pid == r.Version || pid == r.Asked
		byConcept := pconcept != "" && (pconcept == r.Asked || pconcept == r.Concept)
		if !byVersion && !byConcept {
			continue
		}
		if pid != r.Version {
			return fmt.Errorf("record %s: %w: Zenodo answers with version %s, the published pin is version %s",
				r.Asked, ErrRecordChanged, r.Version, pid)
		}
		var f *File
		for i := range r.Files {
			if r.Files[i].Key == p.Key {
				f = &r.Files[i]
				break
			}
		}
		if f == nil {
			return fmt.Errorf("record %s: %w: it no longer lists %q", r.Version, ErrRecordChanged, p.Key)
		}
		if !strings.EqualFold(f.MD5, p.MD5) {
			return fmt.Errorf("record %s: %q: %w: the records API gives MD5 %s, the published pin is %s", r.Version, p.Key, ErrRecordChanged, f.MD5, strings.ToLower(p.MD5))
		}
		if p.Size >= 0 && f.Size != p.Size {
			return fmt.Errorf("record %s: %q: %w: the records API gives %d bytes, the published pin is %d", r.Version, p.Key, ErrRecordChanged, f.Size, p.Size)
		}
	}
	return nil
}
