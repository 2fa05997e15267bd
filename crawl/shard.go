package crawl

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// Shard is one part of a candidate list: the servers whose identity hashes
// to Index of Count (see ShardOf). The zero value is the whole list.
type Shard struct {
	Index, Count int
}

// ParseShard reads "K/N": shard K, from 0, of N.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 0 || ki >= ni {
		return Shard{}, fmt.Errorf("shard %q: want K/N with 0 <= K < N (K from 0, as JOB_COMPLETION_INDEX and SLURM_ARRAY_TASK_ID of --array=0-N-1 count)", s)
	}
	return Shard{Index: ki, Count: ni}, nil
}

// String is "K/N", or "" for the whole list.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ShardOf is the shard, of n, of the server whose identity is id (its
// server_id: the normalised URL of a remote, the coordinate of a package
// such as npm:NAME@VERSION): the first 8 bytes of id's SHA-256, big
// endian, modulo n. It depends on id alone, not on the list's order or
// length, the machine or the run.
func ShardOf(id string, n int) int {
	h := sha256.Sum256([]byte(id))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(n))
}

// targetID is the identity of a candidate, as servers.jsonl.gz records it
// in server_id: a package's coordinate, a URL's normalised form, or a URL
// that cannot be crawled as given.
func targetID(c *Candidate) string {
	if c.Package != nil {
		return c.Package.ID()
	}
	if id, _, err := probe.Normalise(c.URL); err == nil {
		return id
	}
	return c.URL
}

// shardTargets keeps the targets of shard s (all of them for the zero
// Shard).
func shardTargets(ts []target, s Shard) []target {
	if s.Count <= 1 {
		return ts
	}
	out := ts[:0:0]
	for _, t := range ts {
		if ShardOf(t.id, s.Count) == s.Index {
			out = append(out, t)
		}
	}
	return out
}

// candidatesSHA256 is the SHA-256 of the candidate list as the release's
// candidates_remotes.jsonl holds it.
func candidatesSHA256(cands []Candidate) string {
	h := sha256.New()
	for _, c := range cands {
		h.Write(c.Record)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
