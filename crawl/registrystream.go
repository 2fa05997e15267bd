package crawl

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// nameKey is what a read of the registry keeps of each server name while
// the pages stream by: the name's first place in the listing, and where
// its latest version so far lies in the spill file, with what newer
// compares. With the 16-byte digest that keys it, about 100 bytes a name
// once the map's own overhead is counted: 1 M names cost about 100 MB,
// against the 1.5 GB that holding every entry decoded took.
type nameKey struct {
	first     int   // the entry index of the name's first listing
	order     int   // the entry index of its latest version
	off       int64 // that entry's bytes in the spill file
	n         int32
	isLatest  bool
	published int64 // UnixNano; valid when hasTime
	hasTime   bool
}

// digest is a 16-byte SHA-256 prefix: a name or a normalised URL kept for
// deduplication without keeping its bytes.
type digest [16]byte

func digestOf(s string) digest {
	h := sha256.Sum256([]byte(s))
	return digest(h[:16])
}

// StreamRegistry reads the registry as FetchRegistry does and calls emit
// with each candidate in the same order, holding a page at a time, not the
// registry: the raw entries go to a temporary spill file as the pages
// arrive, with only a digest of each name and where its latest version
// lies kept in memory (see nameKey); a second pass over the file then
// converts each name's latest entry at the place of its first listing.
// URLs are deduplicated by 16-byte digests of their normalised form.
func StreamRegistry(ctx context.Context, opt RegistryOptions, emit func(Candidate) error) (*RegistryStats, error) {
	opt.defaults()
	base, err := url.Parse(strings.TrimRight(opt.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("registry %q: not an http(s) URL", opt.URL)
	}
	if opt.UpdatedSince != "" {
		if _, err := time.Parse(time.RFC3339, opt.UpdatedSince); err != nil {
			return nil, fmt.Errorf("updated since %q: not an RFC 3339 time", opt.UpdatedSince)
		}
	}
	if opt.Client == nil {
		tr := registryTransport(base, opt.AllowPrivate, opt.Timeout)
		defer tr.CloseIdleConnections()
		opt.Client = &http.Client{Transport: tr, CheckRedirect: registryRedirect(base)}
	}
	spill, err := os.CreateTemp("", "atlas-reproduce-registry-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(spill.Name())
	defer spill.Close()
	st := &RegistryStats{Skipped: map[string]int{}}
	names, err := readPages(ctx, &opt, base, spill, st)
	if err != nil {
		return nil, err
	}
	st.Names = len(names)
	return st, convertSpilled(ctx, spill, names, probe.Redact(base), st, emit)
}

// readPages reads every page into spill and returns each name's key.
func readPages(ctx context.Context, opt *RegistryOptions, base *url.URL, spill *os.File, st *RegistryStats) (map[digest]*nameKey, error) {
	names := map[digest]*nameKey{}
	w := bufio.NewWriterSize(spill, 1<<20)
	var off int64
	waited := new(time.Duration)
	seenCursor := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		if page > opt.MaxPages {
			return nil, fmt.Errorf("registry %s: more than %d pages", probe.Redact(base), opt.MaxPages)
		}
		raw, next, err := fetchRegistryPage(ctx, opt, base, cursor, page, waited)
		if err != nil {
			return nil, err
		}
		st.Pages++
		for _, r := range raw {
			e := &registryEntry{order: st.Entries}
			st.Entries++
			if err := json.Unmarshal(r, e); err != nil || e.Server.Name == "" {
				return nil, fmt.Errorf("registry %s page %d: server %d is not a server entry of the API", probe.Redact(base), page, st.Entries)
			}
			if m, ok := e.Meta[officialMetaKey]; ok {
				_ = json.Unmarshal(m, &e.official) // a malformed block reads as absent
			}
			k := keyOf(e, off, len(r))
			if _, err := w.Write(r); err != nil {
				return nil, err
			}
			off += int64(len(r))
			d := digestOf(e.Server.Name)
			prev, ok := names[d]
			switch {
			case !ok:
				k.first = k.order
				names[d] = &k
			case newerKey(&k, prev):
				k.first = prev.first
				*prev = k
			}
		}
		if next == "" {
			break
		}
		if seenCursor[next] {
			return nil, fmt.Errorf("registry %s page %d: nextCursor %q was returned before", probe.Redact(base), page, next)
		}
		seenCursor[next] = true
		cursor = next
	}
	return names, w.Flush()
}

func keyOf(e *registryEntry, off int64, n int) nameKey {
	k := nameKey{order: e.order, off: off, n: int32(n), isLatest: e.official.IsLatest != nil && *e.official.IsLatest}
	if t, err := time.Parse(time.RFC3339Nano, e.official.PublishedAt); err == nil {
		k.published, k.hasTime = t.UnixNano(), true
	}
	return k
}

// newerKey is newer on the keys: the registry's isLatest mark first, then
// the later publication time, then the later place in the listing.
func newerKey(e, prev *nameKey) bool {
	if e.isLatest != prev.isLatest {
		return e.isLatest
	}
	if e.hasTime && prev.hasTime && e.published != prev.published {
		return e.published > prev.published
	}
	return e.order > prev.order
}

// convertSpilled walks the spill file in listing order and, at each name's
// first listing, converts that name's latest entry (read back from its
// place in the file) with registryCandidates; a URL another name already
// gave is skipped as a duplicate.
func convertSpilled(ctx context.Context, spill *os.File, names map[digest]*nameKey, registry string, st *RegistryStats, emit func(Candidate) error) error {
	if _, err := spill.Seek(0, io.SeekStart); err != nil {
		return err
	}
	dec := json.NewDecoder(bufio.NewReaderSize(spill, 1<<20))
	seen := map[digest]bool{}
	line := 0
	var buf []byte
	for i := 0; dec.More(); i++ {
		if i%1024 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("registry spill file: %w", err)
		}
		var named struct {
			Server struct {
				Name string `json:"name"`
			} `json:"server"`
		}
		if err := json.Unmarshal(raw, &named); err != nil {
			return fmt.Errorf("registry spill file: %w", err)
		}
		k := names[digestOf(named.Server.Name)]
		if k == nil || k.first != i {
			continue
		}
		if k.order != i {
			buf = append(buf[:0], make([]byte, k.n)...)
			if _, err := spill.ReadAt(buf, k.off); err != nil {
				return fmt.Errorf("registry spill file: %w", err)
			}
			raw = buf
		}
		e := &registryEntry{order: k.order}
		if err := json.Unmarshal(raw, e); err != nil {
			return fmt.Errorf("registry spill file: %w", err)
		}
		if m, ok := e.Meta[officialMetaKey]; ok {
			_ = json.Unmarshal(m, &e.official)
		}
		for _, c := range registryCandidates(registry, []string{e.Server.Name}, map[string]*registryEntry{e.Server.Name: e}, st) {
			// registryCandidates dedups within the entry; across
			// entries it is done here, by digest: of the normalised URL
			// of a remote, of the coordinate of a package.
			var id, reason string
			if c.Package != nil {
				id, reason = c.Package.ID(), skipPackageDuplicate
			} else {
				var err error
				if id, _, err = probe.Normalise(c.URL); err != nil {
					id = c.URL
				}
				reason = skipDuplicate
			}
			d := digestOf(id)
			if seen[d] {
				st.Skipped[reason]++
				st.Kept--
				continue
			}
			seen[d] = true
			line++
			c.Line = line
			if err := emit(c); err != nil {
				return err
			}
		}
	}
	return nil
}
