package runners

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A crawl reads the npm registry as of its start. Its installs run npm
// with prefer-offline, so a packument (a package's metadata) in npm's
// download cache serves every later install of the crawl as it is,
// without a request: the packuments of zod or @types/node, several MB
// each and needed by thousands of packages, are fetched once a crawl
// instead of once an install (a registry that sends no caching headers,
// as many mirrors do, has npm fetch them again every time otherwise).
// dropPackuments, at the crawl's start, removes the packuments earlier
// crawls left, so that none is older than the crawl (or than
// PackageOptions.MetadataMaxAge, for crawls of one package each that
// stand for one census). Tarballs stay: npm finds them by their
// integrity hash, and a version's tarball never changes.

// npmRequestCache is the prefix of the keys under which npm's HTTP
// cache (make-fetch-happen, in cacache) files a response.
const npmRequestCache = "make-fetch-happen:request-cache:"

// dropPackuments removes the packuments of npm's download cache in dir
// (cacache's index-v5 and content-v2) fetched before the time before, and
// keeps its tarballs. An entry it cannot read is removed too: npm
// fetches again what it misses.
func dropPackuments(dir string, before time.Time) error {
	cache := filepath.Join(dir, "_cacache")
	index := filepath.Join(cache, "index-v5")
	err := filepath.WalkDir(index, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tarball, newest, contents := readBucket(b)
		if tarball || newest >= before.UnixMilli() {
			return nil
		}
		for _, integrity := range contents {
			if f := contentPath(cache, integrity); f != "" {
				_ = os.Remove(f)
			}
		}
		return os.Remove(p)
	})
	return err
}

// readBucket reads a cacache index bucket: the entries of one key (the
// bucket's name is the key's SHA-256), each a line "SHA1\tJSON". It says
// whether the key is a tarball's, when its newest entry was written (Unix
// milliseconds), and the integrities of the contents the entries name.
func readBucket(b []byte) (tarball bool, newest int64, contents []string) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		_, entry, ok := bytes.Cut(sc.Bytes(), []byte{'\t'})
		var e struct {
			Key       string  `json:"key"`
			Integrity *string `json:"integrity"`
			Time      int64   `json:"time"`
		}
		if !ok || json.Unmarshal(entry, &e) != nil {
			continue
		}
		if isTarballKey(e.Key) {
			tarball = true
		}
		newest = max(newest, e.Time)
		if e.Integrity != nil {
			contents = append(contents, *e.Integrity)
		}
	}
	return tarball, newest, contents
}

// isTarballKey tells a cached tarball's key (the registry's
// .../-/NAME-VERSION.tgz) from a packument's.
func isTarballKey(key string) bool {
	url, ok := strings.CutPrefix(key, npmRequestCache)
	return ok && strings.Contains(url, "/-/")
}

// contentPath is where cacache keeps the content of an integrity
// ("sha512-BASE64 ..."), under its strongest hash as cacache picks it, or
// "" for one it cannot name.
func contentPath(cache, integrity string) string {
	algo, raw, err := parseIntegrity(integrity)
	if err != nil || len(raw) < 3 {
		return ""
	}
	h := hex.EncodeToString(raw)
	return filepath.Join(cache, "content-v2", algo, h[:2], h[2:4], h[4:])
}
