package crawl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/gunzip"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// MergeSummary counts what Merge wrote.
type MergeSummary struct {
	Shards, Candidates, Servers, Reachable, Unreachable, Tools int
}

// Merge combines the partial releases in dirs (crawl --shard K/N, every K
// of one N, once each) into one release in out, byte for byte the release
// a single crawl of the whole list with the same record-changing options
// would have written (with --no-elapsed: elapsed_ms is the one field that
// differs between two crawls), except release.json, which names the
// shards. It refuses, naming the folder: a shard missing or given twice,
// an incomplete shard (no release.json yet, a record missing, a file not
// matching its SHA256SUMS), shards of other candidate lists, of another
// build or client, or crawled with other options that change a record
// (deadline, caps, --allow-private, --no-elapsed); the scheduling options
// (--concurrency, --per-host, --max-memory, --package-concurrency) may
// differ, since they never change a record. It streams: memory does not
// grow with the records, only with the distinct servers' identities.
func Merge(ctx context.Context, out string, dirs []string) (*MergeSummary, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no shard folders given")
	}
	shards, err := openShards(dirs)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range shards {
			s.close()
		}
	}()
	set, err := outset.Open(out)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	files, err := release.CreateSnapshot(set, release.Compression{Gzip: true})
	if err != nil {
		return nil, err
	}
	sum, err := mergeRecords(ctx, shards, files)
	if err != nil {
		return nil, err
	}
	rel := mergedRelease(shards, sum)
	if err := writeReleaseJSON(set, rel, sum, &files); err != nil {
		return nil, err
	}
	sums := map[string]string{}
	for _, f := range files {
		h, err := f.Finish()
		if err != nil {
			return nil, err
		}
		sums[f.Name()] = h
	}
	if err := release.WriteSums(set, sums); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if err := set.Commit(); err != nil {
		return nil, err
	}
	return &MergeSummary{Shards: len(shards), Candidates: sum.Candidates, Servers: sum.Servers,
		Reachable: sum.Reachable, Unreachable: sum.Unreachable, Tools: sum.Tools}, nil
}

// shardIn is one partial release being read.
type shardIn struct {
	dir     string
	rel     *release.Release
	relSum  string
	sums    hashverify.Manifest
	servers *lineReader
	tools   *lineReader
	n       int // records read
}

func (s *shardIn) name() string {
	return fmt.Sprintf("shard %d/%d (%s)", s.rel.Shard.Index, s.rel.Shard.Count, s.dir)
}

func (s *shardIn) close() {
	if s.servers != nil {
		s.servers.close()
	}
	if s.tools != nil {
		s.tools.close()
	}
}

// openShards reads and checks each shard's release.json and SHA256SUMS,
// sorts the shards by index, and opens their record files.
func openShards(dirs []string) ([]*shardIn, error) {
	var shards []*shardIn
	for _, dir := range dirs {
		rel, b, err := release.ReadBytes(dir)
		if err != nil {
			return nil, fmt.Errorf("merge: %s: %w", dir, err)
		}
		if rel == nil {
			why := "no " + release.File
			if _, err := os.Stat(filepath.Join(dir, JournalFile)); err == nil {
				why += ", only the journal of a crawl that has not finished; rerun that crawl with the same --out and flags to complete it"
			}
			return nil, fmt.Errorf("merge: %s is an incomplete shard: %s", dir, why)
		}
		if rel.Shard == nil {
			return nil, fmt.Errorf("merge: %s is not a shard: its %s names no shard (crawl --shard K/N writes one)", dir, release.File)
		}
		sums, err := hashverify.ReadSHA256Sums(filepath.Join(dir, release.SumsFile))
		if err != nil {
			return nil, fmt.Errorf("merge: %s is an incomplete shard: %w", dir, err)
		}
		h := sha256.Sum256(b)
		relSum := hex.EncodeToString(h[:])
		if err := sums.Check(release.File, relSum); err != nil {
			return nil, fmt.Errorf("merge: %s: %w", dir, err)
		}
		shards = append(shards, &shardIn{dir: dir, rel: rel, relSum: relSum, sums: sums})
	}
	first := shards[0]
	n := first.rel.Shard.Count
	slices.SortStableFunc(shards, func(a, b *shardIn) int { return a.rel.Shard.Index - b.rel.Shard.Index })
	for i, s := range shards {
		switch {
		case s.rel.Shard.Count != n:
			return nil, fmt.Errorf("merge: %s is one of %d shards, %s one of %d", s.name(), s.rel.Shard.Count, first.name(), n)
		case s.rel.Shard.CandidatesSHA256 != first.rel.Shard.CandidatesSHA256:
			return nil, fmt.Errorf("merge: %s is a shard of another candidate list than %s (candidates SHA-256 %s, not %s)",
				s.name(), first.name(), s.rel.Shard.CandidatesSHA256, first.rel.Shard.CandidatesSHA256)
		case i > 0 && shards[i-1].rel.Shard.Index == s.rel.Shard.Index:
			return nil, fmt.Errorf("merge: shard %d/%d is given twice: %s and %s", s.rel.Shard.Index, n, shards[i-1].dir, s.dir)
		}
		if d := recordOptionsDiffer(shards[0].rel, s.rel, shards[0].name(), s.name()); d != "" {
			return nil, fmt.Errorf("merge: shards crawled with options that change a record: %s", d)
		}
	}
	var missing []string
	have := map[int]bool{}
	for _, s := range shards {
		have[s.rel.Shard.Index] = true
	}
	for k := range n {
		if !have[k] {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: shard %s missing: every shard of %d must be given once", strings.Join(missing, ", "), n)
	}
	// Every shard carries the candidate list; the first one's is read
	// and merged, every other is held to its own SHA256SUMS and to the
	// list the shards name.
	for _, s := range shards[1:] {
		if err := checkCandidates(s, first.rel.Shard.CandidatesSHA256); err != nil {
			return nil, err
		}
	}
	for _, s := range shards {
		var err error
		if s.servers, err = openLines(s.dir, release.ServersFile, true, s.sums); err != nil {
			return nil, err
		}
		if s.tools, err = openLines(s.dir, release.ToolsFile, true, s.sums); err != nil {
			return nil, err
		}
	}
	return shards, nil
}

// recordOptionsDiffer names, in words, what differs between the shards
// a (named an) and b (named bn) in what can change a record: the options
// the crawls were given other than scheduling, the build, the client's
// declaration. "" when nothing does. The sandbox's memory bound is
// compared only between shards that both ran packages: a shard that held
// none writes no sandbox_memory, and its records are the same whatever
// the bound.
func recordOptionsDiffer(a, b *release.Release, an, bn string) string {
	oa, ob := a.Options, b.Options
	var d []string
	differ := func(flag, va, vb string) {
		if va != vb {
			d = append(d, fmt.Sprintf("%s was crawled with %s %s, %s with %s", bn, flag, vb, an, va))
		}
	}
	for _, f := range optionFlags {
		// A shard that held no package writes no sandbox_memory, and its
		// records are the same whatever the bound.
		if f.record && (f.flag != "--sandbox-memory" || oa.SandboxMemory != 0 && ob.SandboxMemory != 0) {
			differ(f.flag, f.value(oa), f.value(ob))
		}
	}
	if a.Tool != b.Tool {
		d = append(d, fmt.Sprintf("%s was crawled by atlas-reproduce %s %s, %s by %s %s", bn, b.Tool.Version, b.Tool.Revision, an, a.Tool.Version, a.Tool.Revision))
	}
	if !reflect.DeepEqual(a.Client, b.Client) {
		d = append(d, fmt.Sprintf("%s declared another MCP client in initialize than %s (protocol version %s, not %s)", bn, an, b.Client.ProtocolVersion, a.Client.ProtocolVersion))
	}
	return strings.Join(d, "; ")
}

// byteSize writes a byte count as a flag would be given it: in GiB, MiB
// or KiB when it is a whole number of them.
func byteSize(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%d%s (%d bytes)", n/u.size, u.name, n)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// recordOptions are o without the options that never change a record.
func recordOptions(o release.Options) release.Options {
	o.Concurrency, o.PerHost, o.MaxMemory, o.PackageConcurrency, o.Shard = 0, 0, 0, 0, ""
	// Reuse takes a record only where a run under the same conditions
	// made it: it changes where a record comes from, not what it says.
	o.ReusePackageRecords = false
	return o
}

// lineReader reads the lines of one file of a shard, hashing the bytes on
// disk to check them against the shard's SHA256SUMS at the end.
type lineReader struct {
	name string // dir/file, for messages
	file string
	f    *os.File
	hr   *hashverify.Reader
	br   *bufio.Reader
	sums hashverify.Manifest
}

func openLines(dir, file string, gz bool, sums hashverify.Manifest) (*lineReader, error) {
	name := filepath.Join(dir, file)
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("merge: %s is an incomplete shard: %w", dir, err)
	}
	lr := &lineReader{name: name, file: file, f: f, sums: sums}
	lr.hr = hashverify.NewReader(bufio.NewReaderSize(f, 64<<10))
	var r io.Reader = lr.hr
	if gz {
		zr, err := gunzip.NewReader(lr.hr)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("merge: %s: %w", name, err)
		}
		r = zr
	}
	lr.br = bufio.NewReaderSize(r, 64<<10)
	return lr, nil
}

// next is the next line, with its newline; io.EOF at the end. The line
// is valid until the next call.
func (lr *lineReader) next(buf []byte) ([]byte, error) {
	line := buf[:0]
	for {
		b, err := lr.br.ReadSlice('\n')
		line = append(line, b...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) == 0:
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("merge: %s ends in the middle of a line", lr.name)
		default:
			return nil, fmt.Errorf("merge: %s: %w", lr.name, err)
		}
	}
}

// finish checks the file was read to its end and matches SHA256SUMS.
func (lr *lineReader) finish() error {
	if _, err := lr.br.ReadByte(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("merge: %s holds more records than the candidate list gives its shard", lr.name)
	}
	if _, err := io.Copy(io.Discard, lr.hr); err != nil {
		return fmt.Errorf("merge: %s: %w", lr.name, err)
	}
	if err := lr.sums.Check(lr.file, lr.hr.Sum()); err != nil {
		return fmt.Errorf("merge: %s: %w", filepath.Dir(lr.name), err)
	}
	return nil
}

func (lr *lineReader) close() {
	lr.f.Close()
}

// mergeRecords walks the candidate list in order and takes each server's
// record, and its tools line, from the shard its identity hashes to:
// the order, and so the bytes, of a single crawl.
func mergeRecords(ctx context.Context, shards []*shardIn, files []*release.Writer) (*Summary, error) {
	toolsW, serversW, candW := files[0], files[1], files[2]
	cands, err := openLines(shards[0].dir, release.CandidatesFile, false, shards[0].sums)
	if err != nil {
		return nil, err
	}
	defer cands.close()
	n := len(shards)
	sum := &Summary{}
	seen := map[[16]byte]bool{}
	var cline, sline, tline []byte
	for line := 1; ; line++ {
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, context.Cause(ctx)
			}
		}
		cline, err = cands.next(cline)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if _, err := candW.Write(cline); err != nil {
			return nil, err
		}
		c, err := candidateRecord(cline)
		if err != nil {
			return nil, fmt.Errorf("merge: %s:%d: %w", cands.name, line, err)
		}
		sum.Candidates++
		id := targetID(&c)
		h := sha256.Sum256([]byte(id))
		if k := [16]byte(h[:16]); seen[k] {
			continue
		} else {
			seen[k] = true
		}
		sum.Servers++
		s := shards[ShardOf(id, n)]
		if sline, err = s.servers.next(sline); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("merge: %s is incomplete: %s ends after %d records, before %s", s.name(), release.ServersFile, s.n, id)
			}
			return nil, err
		}
		s.n++
		var rec ServerRecord
		if err := json.Unmarshal(sline, &rec); err != nil {
			return nil, fmt.Errorf("merge: %s: record %d: %w", s.servers.name, s.n, err)
		}
		if rec.ServerID != id {
			return nil, fmt.Errorf("merge: %s: record %d is %s, want %s: not a shard of this candidate list, or incomplete", s.servers.name, s.n, rec.ServerID, id)
		}
		if _, err := serversW.Write(sline); err != nil {
			return nil, err
		}
		countRecord(sum, &target{id: id, pkg: c.Package}, &rec)
		if !rec.Reachable {
			continue
		}
		if tline, err = s.tools.next(tline); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("merge: %s is incomplete: %s has no line for %s", s.name(), release.ToolsFile, id)
			}
			return nil, err
		}
		if want := probe.AppendToolsRecord(nil, id, nil); !bytes.HasPrefix(tline, want[:len(want)-len("]}\n")]) {
			return nil, fmt.Errorf("merge: %s: the line after %d tools lines is not %s's", s.tools.name, sum.Reachable-1, id)
		}
		if _, err := toolsW.Write(tline); err != nil {
			return nil, err
		}
	}
	if err := cands.finish(); err != nil {
		return nil, err
	}
	if got, want := cands.hr.Sum(), shards[0].rel.Shard.CandidatesSHA256; got != want {
		return nil, fmt.Errorf("merge: %s has SHA-256 %s, but its %s names a candidate list of %s", cands.name, got, release.File, want)
	}
	for _, s := range shards {
		if s.n != s.rel.Shard.Servers {
			return nil, fmt.Errorf("merge: %s is incomplete: %d records of the %d its %s counts", s.name(), s.n, s.rel.Shard.Servers, release.File)
		}
		if err := s.servers.finish(); err != nil {
			return nil, err
		}
		if err := s.tools.finish(); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// countRecord adds rec to the counts as writeRelease counts it.
func countRecord(sum *Summary, t *target, rec *ServerRecord) {
	if v := rec.ProtocolVersion; v != "" {
		if sum.ByProtocol == nil {
			sum.ByProtocol = map[ProtocolKey]int{}
		}
		sum.ByProtocol[ProtocolKey{v, rec.Generation}]++
	}
	if sum.ByPackageType == nil {
		sum.ByPackageType = map[PackageTypeKey]int{}
	}
	sum.ByPackageType[packageTypeKey(t, rec)]++
	if rec.Reachable {
		sum.Reachable++
		sum.Tools += rec.ToolCount
		return
	}
	sum.Unreachable++
	if sum.UnreachableByKind == nil {
		sum.UnreachableByKind = map[string]int{}
	}
	sum.UnreachableByKind[rec.ErrorKind]++
}

// checkCandidates holds a shard's candidates file to its SHA256SUMS and to
// the candidate list want of the shards.
func checkCandidates(s *shardIn, want string) error {
	name := filepath.Join(s.dir, release.CandidatesFile)
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("merge: %s is an incomplete shard: %w", s.dir, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("merge: %s: %w", name, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if err := s.sums.Check(release.CandidatesFile, got); err != nil {
		return fmt.Errorf("merge: %s: %w", s.dir, err)
	}
	if got != want {
		return fmt.Errorf("merge: %s has SHA-256 %s, but the shards name a candidate list of %s", name, got, want)
	}
	return nil
}

// mergedRelease is the release.json of the merge: the shards' build,
// client, candidates and record-changing options, the earliest start,
// and the shards themselves.
func mergedRelease(shards []*shardIn, sum *Summary) *release.Release {
	first := shards[0].rel
	rel := &release.Release{
		Tool: first.Tool, Started: first.Started, Options: mergedOptions(shards), Client: first.Client,
		Candidates: first.Candidates,
		Counts:     release.Counts{Candidates: sum.Candidates, Servers: sum.Servers, UnreachableByKind: map[string]int{}},
	}
	for _, s := range shards {
		r := s.rel
		if r.Started < rel.Started {
			rel.Started = r.Started
		}
		rel.Shards = append(rel.Shards, release.ShardPart{
			Index: r.Shard.Index, ReleaseSHA256: s.relSum, Started: r.Started, Finished: r.Finished, Servers: r.Shard.Servers,
			Concurrency: r.Options.Concurrency, PerHost: r.Options.PerHost, MaxMemory: r.Options.MaxMemory,
			PackageConcurrency: r.Options.PackageConcurrency,
		})
	}
	return rel
}

// mergedOptions are the shards' record-changing options, with the
// sandbox's memory bound of any shard that ran packages (they agree): the
// bound the crawl of the whole list was given.
func mergedOptions(shards []*shardIn) release.Options {
	o := recordOptions(shards[0].rel.Options)
	for _, s := range shards {
		if m := s.rel.Options.SandboxMemory; m != 0 {
			o.SandboxMemory = m
		}
	}
	return o
}

// candidateRecord reads one line of a release's candidates_remotes.jsonl,
// where every candidate is a JSON object (ParseCandidates wrote bare URLs
// and coordinates as such), as ParseCandidates reads it, without a
// scanner's buffer per line.
func candidateRecord(line []byte) (Candidate, error) {
	line = bytes.TrimSpace(line)
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(line, &rec); err != nil {
		return Candidate{}, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, ok := rec["package"]; ok && rec["url"] == nil {
		pkg, err := runners.ParsePackageRecord(line)
		if err != nil {
			return Candidate{}, err
		}
		return Candidate{Package: pkg}, nil
	}
	var c Candidate
	if err := json.Unmarshal(rec["url"], &c.URL); err != nil || c.URL == "" {
		return Candidate{}, errors.New("no string \"url\" in the record")
	}
	c.URL = probe.StripUserinfo(c.URL)
	return c, nil
}
