// Package zenodotest is a loopback stand-in for Zenodo, for tests: the
// legacy deposition API (create, new version, files, bucket upload,
// metadata, publish), the records API (records with their files and MD5
// checksums, a concept id answered with its latest version, downloads with
// Range) and the InvenioRDM versions endpoint; with the refusals a real
// instance gives (401 without the token, 413 above a size, 409, 400 with
// field messages) and uploads it can be told to drop.
package zenodotest

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the stand-in. Its fields may be set before the first request;
// the methods may be called at any time.
type Server struct {
	*httptest.Server
	// Files is a second origin that serves the files' content, as
	// Zenodo's links lead to its storage.
	Files *httptest.Server
	// Token is the one access token the deposition API accepts.
	Token string
	// MaxFileSize, when positive, makes an upload larger than it a 413.
	MaxFileSize int64
	// LegacyNewVersionRefused makes actions/newversion answer 410, as an
	// instance that only makes versions through the records API.
	LegacyNewVersionRefused bool

	mu     sync.Mutex
	nextID int
	deps   map[string]*Deposition
	// concepts maps a concept id to its published versions, oldest first.
	concepts map[string][]string
	buckets  map[string]*Deposition
	// drops counts the uploads of a file name still to cut.
	drops map[string]int
	// Requests logs "METHOD path" of every request, and Auth the
	// Authorization headers seen.
	requests []string
	auth     []string
	// The records API's hits and refusals by record id, and the
	// User-Agents it saw.
	recordHits map[string]int
	recordFail map[string][]int
	userAgents []string
}

// Deposition is a deposition, draft or published, as the stand-in holds it.
type Deposition struct {
	ID, Concept string
	Published   bool
	Metadata    json.RawMessage
	Files       []*File
	bucket      string
}

// File is a file of a deposition or record, with how its download
// misbehaves.
type File struct {
	ID, Key string
	Data    []byte

	// ListMD5 and ListSize, when set, are what the records API claims
	// instead of the truth.
	ListMD5  string
	ListSize *int64
	// Relative links the file on the API server with a relative link;
	// Redirect links it on the API server, which redirects to Files (as
	// Zenodo's links do to its storage); otherwise the link is absolute,
	// on Files.
	Relative, Redirect bool

	// Misbehaviour, consumed one download at a time: answer the Fail
	// statuses first (with RetryAfter), then cut the connection after
	// Drops body bytes, or send Stalls bytes and go quiet until the
	// client leaves. IgnoreRange answers every request with 200 and the
	// whole file; Location answers every request with a 302 to it.
	Fail        []int
	RetryAfter  string
	Drops       []int64
	Stalls      []int64
	IgnoreRange bool
	Location    string

	hits   int
	ranges []string
}

func (f *File) md5() string { s := md5.Sum(f.Data); return hex.EncodeToString(s[:]) }

// New starts a stand-in that accepts token; it is closed when the test
// ends.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, nextID: 1000, deps: map[string]*Deposition{}, concepts: map[string][]string{}, buckets: map[string]*Deposition{}, drops: map[string]int{},
		recordHits: map[string]int{}, recordFail: map[string][]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	s.Files = httptest.NewServer(http.HandlerFunc(s.serveFiles))
	t.Cleanup(func() {
		s.Server.Close()
		s.Files.Close()
	})
	return s
}

// AddRecordFile adds a copy of f to the published record id (made, with
// no concept, if there is none) and returns the copy, whose misbehaviour
// the downloads then consume.
func (s *Server) AddRecordFile(id string, f File) *File {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deps[id]
	if d == nil {
		d = &Deposition{ID: id, Published: true, bucket: "b" + id, Metadata: json.RawMessage(`{}`)}
		s.deps[id] = d
		s.buckets[d.bucket] = d
	}
	c := f
	if c.ID == "" {
		c.ID = s.newID()
	}
	d.Files = append(d.Files, &c)
	return &c
}

// SetConcept makes version the latest version of concept: the records API
// answers concept with it.
func (s *Server) SetConcept(concept, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.concepts[concept] = append(s.concepts[concept], version)
}

// FailRecord makes the records API answer id with statuses first.
func (s *Server) FailRecord(id string, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordFail[id] = append(s.recordFail[id], statuses...)
}

// RecordHits is how many times the records API was asked for id.
func (s *Server) RecordHits(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordHits[id]
}

// UserAgents are the User-Agent headers the records API saw.
func (s *Server) UserAgents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.userAgents...)
}

// FileHits is how many download requests reached f.
func (s *Server) FileHits(f *File) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f.hits
}

// FileRanges are the Range headers of f's download requests.
func (s *Server) FileRanges(f *File) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), f.ranges...)
}

// DropUploads makes the next n uploads of key cut the connection after
// reading part of the body.
func (s *Server) DropUploads(key string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops[key] += n
}

// Requests returns "METHOD path" for each request so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Get returns a copy of deposition id, or nil.
func (s *Server) Get(id string) *Deposition {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deps[id]
	if d == nil {
		return nil
	}
	c := *d
	c.Files = append([]*File(nil), d.Files...)
	return &c
}

// SetFile replaces (or adds) a file of a deposition, published or not,
// as a tampered store would: for tests of what a reader then finds.
func (s *Server) SetFile(id, key string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deps[id]
	for _, f := range d.Files {
		if f.Key == key {
			f.Data = data
			return
		}
	}
	d.Files = append(d.Files, &File{ID: s.newID(), Key: key, Data: data})
}

// Latest is the latest published version of concept.
func (s *Server) Latest(concept string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.concepts[concept]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

func (s *Server) newID() string {
	s.nextID++
	return strconv.Itoa(s.nextID)
}

// DOI is the DOI the stand-in gives record id.
func DOI(id string) string { return "10.5281/zenodo." + id }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, msg string, fields ...[2]string) {
	body := map[string]any{"status": status, "message": msg}
	if len(fields) > 0 {
		var errs []map[string]string
		for _, f := range fields {
			errs = append(errs, map[string]string{"field": f[0], "message": f[1]})
		}
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/redirect/"):
		http.Redirect(w, r, s.Files.URL+"/dl/"+strings.TrimPrefix(r.URL.EscapedPath(), "/redirect/"), http.StatusFound)
		return
	case strings.HasPrefix(p, "/api/records/") && strings.Contains(p, "/files/"):
		s.serveFiles(w, r)
		return
	case strings.HasPrefix(p, "/api/records/"):
		s.serveRecords(w, r, strings.TrimPrefix(p, "/api/records/"))
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		apiError(w, http.StatusUnauthorized, "The server could not verify that you are authorized to access the URL requested.")
		return
	}
	switch {
	case strings.HasPrefix(p, "/api/files/"):
		s.serveBucket(w, r, strings.TrimPrefix(p, "/api/files/"))
	case p == "/api/deposit/depositions" && r.Method == http.MethodPost:
		s.mu.Lock()
		d := s.create("")
		body := s.depJSON(d)
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, body)
	case strings.HasPrefix(p, "/api/deposit/depositions/"):
		s.serveDeposition(w, r, strings.Split(strings.TrimPrefix(p, "/api/deposit/depositions/"), "/"))
	default:
		apiError(w, http.StatusNotFound, "not found")
	}
}

// create makes a draft; concept empty starts a new concept. Under s.mu.
func (s *Server) create(concept string) *Deposition {
	id := s.newID()
	if concept == "" {
		concept = s.newID()
	}
	d := &Deposition{ID: id, Concept: concept, bucket: "b" + id, Metadata: json.RawMessage(`{}`)}
	s.deps[id] = d
	s.buckets[d.bucket] = d
	return d
}

func (s *Server) depJSON(d *Deposition) map[string]any {
	files := []map[string]any{}
	for _, f := range d.Files {
		files = append(files, map[string]any{"id": f.ID, "filename": f.Key, "filesize": len(f.Data), "checksum": f.md5()})
	}
	var md map[string]any
	json.Unmarshal(d.Metadata, &md)
	if md == nil {
		md = map[string]any{}
	}
	md["prereserve_doi"] = map[string]any{"doi": DOI(d.ID), "recid": d.ID}
	state, doi := "unsubmitted", ""
	if d.Published {
		state, doi = "done", DOI(d.ID)
	}
	out := map[string]any{
		"id": json.Number(d.ID), "conceptrecid": d.Concept, "record_id": json.Number(d.ID),
		"doi": doi, "state": state, "submitted": d.Published, "metadata": md, "files": files,
		"links": map[string]any{
			"bucket": s.URL + "/api/files/" + d.bucket,
			"html":   s.URL + "/deposit/" + d.ID,
		},
	}
	for _, v := range s.depsOf(d.Concept) {
		if !v.Published {
			out["links"].(map[string]any)["latest_draft"] = s.URL + "/api/deposit/depositions/" + v.ID
		}
	}
	return out
}

func (s *Server) depsOf(concept string) []*Deposition {
	var out []*Deposition
	for _, d := range s.deps {
		if d.Concept == concept {
			out = append(out, d)
		}
	}
	return out
}

func (s *Server) serveDeposition(w http.ResponseWriter, r *http.Request, parts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deps[parts[0]]
	if d == nil {
		apiError(w, http.StatusNotFound, "PID does not exist.")
		return
	}
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.depJSON(d))
	case len(parts) == 1 && r.Method == http.MethodPut:
		if d.Published {
			apiError(w, http.StatusBadRequest, "Validation error.", [2]string{"metadata", "a published deposition cannot be edited"})
			return
		}
		var body struct {
			Metadata json.RawMessage `json:"metadata"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			apiError(w, http.StatusBadRequest, "Could not parse JSON.")
			return
		}
		var md struct {
			UploadType string            `json:"upload_type"`
			Title      string            `json:"title"`
			Creators   []json.RawMessage `json:"creators"`
			Desc       string            `json:"description"`
			Date       string            `json:"publication_date"`
		}
		json.Unmarshal(body.Metadata, &md)
		var fields [][2]string
		if md.UploadType == "" {
			fields = append(fields, [2]string{"metadata.upload_type", "Missing data for required field."})
		}
		if md.Title == "" {
			fields = append(fields, [2]string{"metadata.title", "Missing data for required field."})
		}
		if len(md.Creators) == 0 {
			fields = append(fields, [2]string{"metadata.creators", "Missing data for required field."})
		}
		if md.Desc == "" {
			fields = append(fields, [2]string{"metadata.description", "Missing data for required field."})
		}
		if _, err := time.Parse(time.DateOnly, md.Date); md.Date != "" && err != nil {
			fields = append(fields, [2]string{"metadata.publication_date", "Not a valid date."})
		}
		if len(fields) > 0 {
			apiError(w, http.StatusBadRequest, "Validation error.", fields...)
			return
		}
		d.Metadata = body.Metadata
		writeJSON(w, http.StatusOK, s.depJSON(d))
	case len(parts) == 3 && parts[1] == "files" && r.Method == http.MethodDelete:
		for i, f := range d.Files {
			if f.ID == parts[2] {
				d.Files = append(d.Files[:i:i], d.Files[i+1:]...)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		apiError(w, http.StatusNotFound, "file not found")
	case len(parts) == 3 && parts[1] == "actions" && parts[2] == "publish" && r.Method == http.MethodPost:
		if d.Published {
			apiError(w, http.StatusBadRequest, "Validation error.", [2]string{"", "the deposition is already published"})
			return
		}
		if len(d.Files) == 0 {
			apiError(w, http.StatusBadRequest, "Validation error.", [2]string{"files", "Minimum one file must be provided."})
			return
		}
		if string(d.Metadata) == "{}" {
			apiError(w, http.StatusBadRequest, "Validation error.", [2]string{"metadata.title", "Missing data for required field."})
			return
		}
		d.Published = true
		s.concepts[d.Concept] = append(s.concepts[d.Concept], d.ID)
		writeJSON(w, http.StatusAccepted, s.depJSON(d))
	case len(parts) == 3 && parts[1] == "actions" && parts[2] == "newversion" && r.Method == http.MethodPost:
		if s.LegacyNewVersionRefused {
			apiError(w, http.StatusGone, "This endpoint is no longer supported: use the records API.")
			return
		}
		if s.newVersion(w, d) != nil {
			writeJSON(w, http.StatusCreated, s.depJSON(d))
		}
	default:
		apiError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// newVersion opens a draft of d's concept inheriting d's files, or
// answers w with why it cannot and returns nil. Under s.mu.
func (s *Server) newVersion(w http.ResponseWriter, d *Deposition) *Deposition {
	if !d.Published {
		apiError(w, http.StatusBadRequest, "only a published record has new versions")
		return nil
	}
	vs := s.concepts[d.Concept]
	if vs[len(vs)-1] != d.ID {
		apiError(w, http.StatusBadRequest, "a new version is made from the latest version")
		return nil
	}
	for _, v := range s.depsOf(d.Concept) {
		if !v.Published {
			apiError(w, http.StatusConflict, "a new version draft already exists")
			return nil
		}
	}
	nd := s.create(d.Concept)
	for _, f := range d.Files {
		nd.Files = append(nd.Files, &File{ID: s.newID(), Key: f.Key, Data: f.Data})
	}
	nd.Metadata = d.Metadata
	return nd
}

func (s *Server) serveBucket(w http.ResponseWriter, r *http.Request, rest string) {
	bucket, key, _ := strings.Cut(rest, "/")
	key, _ = url.PathUnescape(key)
	if r.Method != http.MethodPut {
		apiError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	s.mu.Lock()
	d := s.buckets[bucket]
	drop := s.drops[key] > 0
	if drop {
		s.drops[key]--
	}
	max := s.MaxFileSize
	s.mu.Unlock()
	if d == nil {
		apiError(w, http.StatusNotFound, "bucket not found")
		return
	}
	if max > 0 && r.ContentLength > max {
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("File size limit exceeded (%d bytes).", max))
		return
	}
	if drop {
		io.CopyN(io.Discard, r.Body, max64(r.ContentLength/2, 1))
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r.Body); err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.Published {
		apiError(w, http.StatusForbidden, "the bucket of a published record is locked")
		return
	}
	f := &File{ID: s.newID(), Key: key, Data: buf.Bytes()}
	replaced := false
	for i, g := range d.Files {
		if g.Key == key {
			d.Files[i], replaced = f, true
		}
	}
	if !replaced {
		d.Files = append(d.Files, f)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"key": key, "size": len(f.Data), "checksum": "md5:" + f.md5()})
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// serveRecords answers the records API: a published record and its files
// (a concept id with its latest version) and the InvenioRDM versions
// endpoint.
func (s *Server) serveRecords(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.Split(rest, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	id := parts[0]
	if len(parts) == 1 {
		s.recordHits[id]++
		s.userAgents = append(s.userAgents, r.Header.Get("User-Agent"))
	}
	if vs := s.concepts[id]; len(vs) > 0 && s.deps[id] == nil {
		http.Redirect(w, r, "/api/records/"+vs[len(vs)-1]+strings.TrimPrefix(rest, id), http.StatusMovedPermanently)
		return
	}
	if fails := s.recordFail[id]; len(parts) == 1 && len(fails) > 0 {
		s.recordFail[id] = fails[1:]
		w.WriteHeader(fails[0])
		return
	}
	d := s.deps[id]
	if d == nil || !d.Published {
		apiError(w, http.StatusNotFound, "PID does not exist.")
		return
	}
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		files := []map[string]any{}
		for _, f := range d.Files {
			e := map[string]any{"key": f.Key, "size": len(f.Data), "checksum": "md5:" + f.md5()}
			if f.ListMD5 != "" {
				e["checksum"] = "md5:" + f.ListMD5
			}
			if f.ListSize != nil {
				e["size"] = *f.ListSize
			}
			link := s.Files.URL + "/dl/" + d.ID + "/" + url.PathEscape(f.Key)
			switch {
			case f.Redirect:
				link = s.URL + "/redirect/" + d.ID + "/" + url.PathEscape(f.Key)
			case f.Relative:
				link = "/api/records/" + d.ID + "/files/" + url.PathEscape(f.Key) + "/content"
			}
			e["links"] = map[string]string{"self": link}
			files = append(files, e)
		}
		out := map[string]any{"id": json.Number(d.ID), "doi": DOI(d.ID), "files": files}
		if c := s.conceptOf(d); c != "" {
			out["conceptrecid"] = c
		}
		writeJSON(w, http.StatusOK, out)
	case len(parts) == 2 && parts[1] == "versions" && r.Method == http.MethodPost:
		if r.Header.Get("Authorization") != "Bearer "+s.Token {
			apiError(w, http.StatusUnauthorized, "The server could not verify that you are authorized to access the URL requested.")
			return
		}
		if nd := s.newVersion(w, d); nd != nil {
			writeJSON(w, http.StatusCreated, map[string]any{"id": nd.ID, "parent": map[string]any{"id": nd.Concept}, "is_draft": true})
		}
	default:
		apiError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// conceptOf is d's concept id, as made or as SetConcept says. Under s.mu.
func (s *Server) conceptOf(d *Deposition) string {
	if d.Concept != "" {
		return d.Concept
	}
	for c, vs := range s.concepts {
		for _, v := range vs {
			if v == d.ID {
				return c
			}
		}
	}
	return ""
}

// serveFiles answers a download: Files' /dl/ID/KEY, and the API server's
// /api/records/ID/files/KEY/content, misbehaving as the file says.
func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/dl/"), "/api/records/")
	p = strings.TrimSuffix(p, "/content")
	id, key, _ := strings.Cut(p, "/")
	key = strings.TrimPrefix(key, "files/")

	s.mu.Lock()
	var f *File
	if d := s.deps[id]; d != nil && d.Published {
		for _, c := range d.Files {
			if c.Key == key {
				f = c
			}
		}
	}
	if f == nil {
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	f.hits++
	f.ranges = append(f.ranges, r.Header.Get("Range"))
	if f.Location != "" {
		loc := f.Location
		s.mu.Unlock()
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusFound)
		return
	}
	status := 0
	if len(f.Fail) > 0 {
		status, f.Fail = f.Fail[0], f.Fail[1:]
	}
	drop, stall := int64(-1), int64(-1)
	if status == 0 && len(f.Drops) > 0 {
		drop, f.Drops = f.Drops[0], f.Drops[1:]
	} else if status == 0 && len(f.Stalls) > 0 {
		stall, f.Stalls = f.Stalls[0], f.Stalls[1:]
	}
	data, ignoreRange, retryAfter := f.Data, f.IgnoreRange, f.RetryAfter
	s.mu.Unlock()

	if status != 0 {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
		return
	}
	code, from := http.StatusOK, int64(0)
	if rg := r.Header.Get("Range"); rg != "" && !ignoreRange {
		spec, ok := strings.CutPrefix(rg, "bytes=")
		n, err := strconv.ParseInt(strings.TrimSuffix(spec, "-"), 10, 64)
		if !ok || !strings.HasSuffix(spec, "-") || err != nil {
			http.Error(w, "bad range", http.StatusBadRequest)
			return
		}
		if n >= int64(len(data)) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		code, from = http.StatusPartialContent, n
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(data)-1, len(data)))
	}
	body := data[from:]
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	switch {
	case drop >= 0 && drop < int64(len(body)):
		w.Write(body[:drop])
		rc := http.NewResponseController(w)
		rc.Flush()
		if conn, _, err := rc.Hijack(); err == nil {
			conn.Close()
		}
	case stall >= 0 && stall < int64(len(body)):
		w.Write(body[:stall])
		http.NewResponseController(w).Flush()
		// Quiet until the client gives up on the connection.
		<-r.Context().Done()
	default:
		w.Write(body)
	}
}
