package fetch

import (
	"crypto/md5"
	"encoding/hex"
	"math/rand/v2"
	"net/http/httptest"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodotest"
)

// fakeZenodo is the tests' view of the loopback Zenodo of zenodotest (the
// one stand-in every package's tests use): api is its API server, files
// the other origin its absolute download links lead to.
type fakeZenodo struct {
	z          *zenodotest.Server
	api, files *httptest.Server
	served     map[*fakeFile]*zenodotest.File
}

// fakeFile is a file of a record and how its download misbehaves, set by
// add's setup functions (see zenodotest.File for each field).
type fakeFile struct {
	key  string
	data []byte

	listMD5            string
	listSize           *int64
	relative, redirect bool

	fail        []int
	retryAfter  string
	drops       []int64
	stalls      []int64
	ignoreRange bool
	location    string
}

func newFakeZenodo(t *testing.T) *fakeZenodo {
	t.Helper()
	z := zenodotest.New(t, "fetch-tests-need-no-token")
	return &fakeZenodo{z: z, api: z.Server, files: z.Files, served: map[*fakeFile]*zenodotest.File{}}
}

// add registers a file of record, configured by setup before the server
// sees it.
func (z *fakeZenodo) add(record, key string, data []byte, setup ...func(*fakeFile)) *fakeFile {
	f := &fakeFile{key: key, data: data}
	for _, s := range setup {
		s(f)
	}
	z.served[f] = z.z.AddRecordFile(record, zenodotest.File{
		Key: f.key, Data: f.data, ListMD5: f.listMD5, ListSize: f.listSize, Relative: f.relative, Redirect: f.redirect,
		Fail: f.fail, RetryAfter: f.retryAfter, Drops: f.drops, Stalls: f.stalls, IgnoreRange: f.ignoreRange, Location: f.location,
	})
	return f
}

// concept makes concept a concept record whose newest version is version.
func (z *fakeZenodo) concept(concept, version string) { z.z.SetConcept(concept, version) }

func (z *fakeZenodo) seenUserAgents() []string { return z.z.UserAgents() }

// failRecord makes the records API answer record with statuses first.
func (z *fakeZenodo) failRecord(record string, statuses ...int) {
	z.z.FailRecord(record, statuses...)
}

func (z *fakeZenodo) fileHits(f *fakeFile) int { return z.z.FileHits(z.served[f]) }

func (z *fakeZenodo) fileRanges(f *fakeFile) []string { return z.z.FileRanges(z.served[f]) }

func (z *fakeZenodo) recordHits(id string) int { return z.z.RecordHits(id) }

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
