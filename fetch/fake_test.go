package fetch

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeZenodo is a loopback stand-in for Zenodo: a records API server and a
// second server (another origin) for absolute download links. Each file can
// be told to misbehave a set number of times.
type fakeZenodo struct {
	api   *httptest.Server
	files *httptest.Server

	mu      sync.Mutex
	records map[string][]*fakeFile
	apiHits map[string]int
	// apiFail are statuses the records API answers before succeeding.
	apiFail map[string][]int
	// concepts maps a concept record ID to its newest version, which the
	// records API redirects to, as Zenodo does.
	concepts map[string]string
	// userAgents are the User-Agent headers the records API saw.
	userAgents []string
}

type fakeFile struct {
	key  string
	data []byte
	// listMD5 and listSize, when set, are what the API claims instead of
	// the truth.
	listMD5  string
	listSize *int64
	// relative serves the file from the API server with a relative link;
	// otherwise the link is absolute on the other server.
	relative bool
	// redirect links to the API server, which redirects to the other one,
	// as Zenodo's links do to its storage.
	redirect bool

	// Misbehaviour, consumed one request at a time.
	fail        []int   // answer these statuses first
	retryAfter  string  // with this Retry-After on failures
	drops       []int64 // then cut the connection after this many body bytes
	stalls      []int64 // or send this many body bytes and go quiet
	ignoreRange bool    // answer every request with 200 and the whole file
	// location, when set, answers every request with a 302 to it.
	location string

	hits   int
	ranges []string
}

func newFakeZenodo(t *testing.T) *fakeZenodo {
	t.Helper()
	z := &fakeZenodo{records: map[string][]*fakeFile{}, apiHits: map[string]int{}, apiFail: map[string][]int{}, concepts: map[string]string{}}
	z.api = httptest.NewServer(http.HandlerFunc(z.serveAPI))
	z.files = httptest.NewServer(http.HandlerFunc(z.serveFiles))
	t.Cleanup(func() {
		z.api.Close()
		z.files.Close()
	})
	return z
}

// add registers a file of record. setup, if any, configures its
// misbehaviour under the lock the handlers take: curl is no Go client, so
// nothing else orders the test's writes before the handlers' reads.
func (z *fakeZenodo) add(record, key string, data []byte, setup ...func(*fakeFile)) *fakeFile {
	z.mu.Lock()
	defer z.mu.Unlock()
	f := &fakeFile{key: key, data: data}
	for _, s := range setup {
		s(f)
	}
	z.records[record] = append(z.records[record], f)
	return f
}

// concept makes concept a concept record whose newest version is version.
func (z *fakeZenodo) concept(concept, version string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.concepts[concept] = version
}

func (z *fakeZenodo) seenUserAgents() []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	return append([]string(nil), z.userAgents...)
}

// failRecord makes the records API answer record with statuses first.
func (z *fakeZenodo) failRecord(record string, statuses ...int) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.apiFail[record] = append(z.apiFail[record], statuses...)
}

func (z *fakeZenodo) fileHits(f *fakeFile) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return f.hits
}

func (z *fakeZenodo) fileRanges(f *fakeFile) []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	return append([]string(nil), f.ranges...)
}

func (z *fakeZenodo) recordHits(id string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.apiHits[id]
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func (z *fakeZenodo) serveAPI(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.URL.Path, "/files/") {
		z.serveFiles(w, r)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/redirect/"); ok {
		http.Redirect(w, r, z.files.URL+"/dl/"+rest, http.StatusFound)
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/api/records/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	z.mu.Lock()
	z.apiHits[id]++
	z.userAgents = append(z.userAgents, r.Header.Get("User-Agent"))
	if version, ok := z.concepts[id]; ok {
		z.mu.Unlock()
		http.Redirect(w, r, "/api/records/"+version, http.StatusMovedPermanently)
		return
	}
	if fails := z.apiFail[id]; len(fails) > 0 {
		z.apiFail[id] = fails[1:]
		z.mu.Unlock()
		w.WriteHeader(fails[0])
		return
	}
	files, ok := z.records[id]
	type link struct {
		Self string `json:"self"`
	}
	type entry struct {
		Key      string `json:"key"`
		Size     int64  `json:"size"`
		Checksum string `json:"checksum"`
		Links    link   `json:"links"`
	}
	var out struct {
		ID           json.Number `json:"id"`
		ConceptRecID string      `json:"conceptrecid,omitempty"`
		Files        []entry     `json:"files"`
	}
	out.ID = json.Number(id)
	for c, v := range z.concepts {
		if v == id {
			out.ConceptRecID = c
		}
	}
	for _, f := range files {
		e := entry{Key: f.key, Size: int64(len(f.data)), Checksum: "md5:" + md5hex(f.data)}
		if f.listMD5 != "" {
			e.Checksum = "md5:" + f.listMD5
		}
		if f.listSize != nil {
			e.Size = *f.listSize
		}
		if f.redirect {
			e.Links.Self = z.api.URL + "/redirect/" + id + "/" + url.PathEscape(f.key)
		} else if f.relative {
			e.Links.Self = "/api/records/" + id + "/files/" + url.PathEscape(f.key) + "/content"
		} else {
			e.Links.Self = z.files.URL + "/dl/" + id + "/" + url.PathEscape(f.key)
		}
		out.Files = append(out.Files, e)
	}
	z.mu.Unlock()
	if !ok {
		http.Error(w, `{"status":404,"message":"PID does not exist."}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// serveFiles answers /dl/ID/KEY and /api/records/ID/files/KEY/content.
func (z *fakeZenodo) serveFiles(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/dl/"), "/api/records/")
	p = strings.TrimSuffix(p, "/content")
	id, key, _ := strings.Cut(p, "/")
	key = strings.TrimPrefix(key, "files/")

	z.mu.Lock()
	var f *fakeFile
	for _, c := range z.records[id] {
		if c.key == key {
			f = c
		}
	}
	if f == nil {
		z.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	f.hits++
	f.ranges = append(f.ranges, r.Header.Get("Range"))
	if f.location != "" {
		loc := f.location
		z.mu.Unlock()
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusFound)
		return
	}
	status := 0
	if len(f.fail) > 0 {
		status, f.fail = f.fail[0], f.fail[1:]
	}
	drop, stall := int64(-1), int64(-1)
	if status == 0 && len(f.drops) > 0 {
		drop, f.drops = f.drops[0], f.drops[1:]
	} else if status == 0 && len(f.stalls) > 0 {
		stall, f.stalls = f.stalls[0], f.stalls[1:]
	}
	data, ignoreRange, retryAfter := f.data, f.ignoreRange, f.retryAfter
	z.mu.Unlock()

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
		conn, _, err := rc.Hijack()
		if err == nil {
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
