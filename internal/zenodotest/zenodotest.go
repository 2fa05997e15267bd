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
}

// Deposition is a deposition, draft or published, as the stand-in holds it.
type Deposition struct {
	ID, Concept string
	Published   bool
	Metadata    json.RawMessage
	Files       []*File
	bucket      string
}

// File is a file in a deposition's bucket.
type File struct {
	ID, Key string
	Data    []byte
}

func (f *File) md5() string { s := md5.Sum(f.Data); return hex.EncodeToString(s[:]) }

// New starts a stand-in that accepts token; it is closed when the test
// ends.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, nextID: 1000, deps: map[string]*Deposition{}, concepts: map[string][]string{}, buckets: map[string]*Deposition{}, drops: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
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
		nd, status, msg := s.newVersion(d)
		if nd == nil {
			apiError(w, status, msg)
			return
		}
		writeJSON(w, http.StatusCreated, s.depJSON(d))
	default:
		apiError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// newVersion opens a draft of d's concept inheriting d's files. Under s.mu.
func (s *Server) newVersion(d *Deposition) (*Deposition, int, string) {
	if !d.Published {
		return nil, http.StatusBadRequest, "only a published record has new versions"
	}
	vs := s.concepts[d.Concept]
	if vs[len(vs)-1] != d.ID {
		return nil, http.StatusBadRequest, "a new version is made from the latest version"
	}
	for _, v := range s.depsOf(d.Concept) {
		if !v.Published {
			return nil, http.StatusConflict, "a new version draft already exists"
		}
	}
	nd := s.create(d.Concept)
	for _, f := range d.Files {
		nd.Files = append(nd.Files, &File{ID: s.newID(), Key: f.Key, Data: f.Data})
	}
	nd.Metadata = d.Metadata
	return nd, 0, ""
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
// (a concept id with its latest version), a file's content, and the
// InvenioRDM versions endpoint.
func (s *Server) serveRecords(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.Split(rest, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	id := parts[0]
	if vs := s.concepts[id]; len(vs) > 0 && s.deps[id] == nil {
		http.Redirect(w, r, "/api/records/"+vs[len(vs)-1]+strings.TrimPrefix(rest, id), http.StatusMovedPermanently)
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
			files = append(files, map[string]any{
				"key": f.Key, "size": len(f.Data), "checksum": "md5:" + f.md5(),
				"links": map[string]string{"self": s.URL + "/api/records/" + d.ID + "/files/" + url.PathEscape(f.Key) + "/content"},
			})
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": json.Number(d.ID), "conceptrecid": d.Concept, "doi": DOI(d.ID), "files": files})
	case len(parts) == 4 && parts[1] == "files" && parts[3] == "content" && r.Method == http.MethodGet:
		key, _ := url.PathUnescape(parts[2])
		for _, f := range d.Files {
			if f.Key == key {
				http.ServeContent(w, r, key, time.Time{}, bytes.NewReader(f.Data))
				return
			}
		}
		apiError(w, http.StatusNotFound, "file not found")
	case len(parts) == 2 && parts[1] == "versions" && r.Method == http.MethodPost:
		if r.Header.Get("Authorization") != "Bearer "+s.Token {
			apiError(w, http.StatusUnauthorized, "The server could not verify that you are authorized to access the URL requested.")
			return
		}
		nd, status, msg := s.newVersion(d)
		if nd == nil {
			apiError(w, status, msg)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]any{"id": nd.ID, "parent": map[string]any{"id": nd.Concept}, "is_draft": true})
	default:
		apiError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}
