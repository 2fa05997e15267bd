package crawl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TestParseShard: K/N with 0 <= K < N, nothing else.
func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/1", Shard{0, 1}, true}, {"3/16", Shard{3, 16}, true}, {"15/16", Shard{15, 16}, true},
		{"16/16", Shard{}, false}, {"-1/4", Shard{}, false}, {"1/0", Shard{}, false}, {"1", Shard{}, false}, {"a/b", Shard{}, false}, {"", Shard{}, false},
	} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestShardOfIsStable: the shard of an identity is its SHA-256's, the
// same on every machine (pinned values), and N shards cover every id once.
func TestShardOfIsStable(t *testing.T) {
	for id, want := range map[string]int{"https://example.org/mcp": ShardOf("https://example.org/mcp", 16), "npm:left-pad@1.3.0": ShardOf("npm:left-pad@1.3.0", 16)} {
		if got := ShardOf(id, 16); got != want {
			t.Errorf("ShardOf(%q) = %d then %d", id, want, got)
		}
	}
	// Pinned: the first 8 bytes of SHA-256("a") are ca978112ca1bbdca.
	if got, want := ShardOf("a", 1000), int(uint64(0xca978112ca1bbdca)%1000); got != want {
		t.Errorf("ShardOf(a, 1000) = %d, want %d", got, want)
	}
}

// TestShardsMergeToTheWholeCrawl: a fleet with silent servers crawled whole,
// and in 4 shards each at another concurrency and per-host bound, merged:
// the same bytes (release.json aside, which names the shards). Then every
// refusal of merge, each naming its cause. On a synctest clock, so the
// silent servers cost no wall time and are recorded alike under any load.
func TestShardsMergeToTheWholeCrawl(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := crawltest.NewPipeNet(t)
		fl := newPipeFleet(t, n, 24, 6)
		base := Options{Candidates: fl.candidates, OmitElapsed: true, Probe: n.Probe(2 * time.Second)}
		crawlTo := func(cands string, conc, perHost int, sh Shard, timeout time.Duration) string {
			t.Helper()
			opt := base
			opt.Candidates, opt.Out, opt.Concurrency, opt.PerHost, opt.Shard = cands, t.TempDir(), conc, perHost, sh
			opt.Probe.Timeout = timeout
			if _, err := Run(context.Background(), opt); err != nil {
				t.Fatal(err)
			}
			return opt.Out
		}
		whole := crawlTo(fl.candidates, 8, 2, Shard{}, 2*time.Second)
		var shards []string
		servers := 0
		for k, conc := range []int{1, 2, 5, 32} {
			dir := crawlTo(fl.candidates, conc, 1+k%2, Shard{k, 4}, 2*time.Second)
			shards = append(shards, dir)
			rel, err := release.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if rel.Shard == nil || rel.Shard.Index != k || rel.Shard.Count != 4 || rel.Options.Shard != fmt.Sprintf("%d/4", k) {
				t.Fatalf("shard %d: release.json says %+v, options.shard %q", k, rel.Shard, rel.Options.Shard)
			}
			if rel.Shard.Servers == 0 || rel.Shard.Servers == len(fl.order) {
				t.Errorf("shard %d holds %d of %d servers: not a part", k, rel.Shard.Servers, len(fl.order))
			}
			servers += rel.Shard.Servers
		}
		if servers != len(fl.order) {
			t.Errorf("the shards hold %d servers, want %d", servers, len(fl.order))
		}
		merged := t.TempDir()
		// Given in another order than their indexes: the merge sorts them.
		if _, err := Merge(context.Background(), merged, []string{shards[2], shards[0], shards[3], shards[1]}); err != nil {
			t.Fatal(err)
		}
		want, got := readAll(t, whole), readAll(t, merged)
		checkSilent(t, want, 6, "no answer within 666.666666ms (during server/discover)")
		for name, b := range want {
			if name == release.SumsFile {
				b, got[name] = withoutRelease(b), withoutRelease(got[name])
			}
			if !bytes.Equal(b, got[name]) {
				t.Errorf("%s of the merge differs from the whole crawl's", name)
			}
		}
		checkMergedRelease(t, whole, merged, shards)

		// A shard rerun in its folder resumes from its journal and probes
		// nothing again; the folder of one shard is not resumed as another.
		rerun := base
		rerun.Out, rerun.Concurrency, rerun.PerHost, rerun.Shard = shards[2], 5, 1, Shard{2, 4}
		if sum, err := Run(context.Background(), rerun); err != nil || sum.Probed != 0 || sum.Resumed == 0 {
			t.Errorf("rerun of shard 2/4: %+v, %v; want every server resumed from the journal", sum, err)
		}
		rerun.Shard = Shard{1, 4}
		if _, err := Run(context.Background(), rerun); err == nil || !strings.Contains(err.Error(), "--shard 2/4 then, 1/4 now") {
			t.Errorf("shard 1/4 in the folder of shard 2/4: %v, want a refusal naming the shard", err)
		}

		// The refusals, each naming what is wrong.
		other := writeCandidates(t, append(readLines(t, filepath.Join(whole, release.CandidatesFile)), `{"url": "`+n.Hanging()+`/extra"}`))
		otherList := crawlTo(other, 4, 2, Shard{3, 4}, 2*time.Second)
		otherFlags := crawlTo(fl.candidates, 4, 2, Shard{3, 4}, 3*time.Second)
		notShard := whole
		unfinished := t.TempDir()
		if err := os.WriteFile(filepath.Join(unfinished, JournalFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		tampered := copyDir(t, shards[1])
		tamper(t, filepath.Join(tampered, release.ServersFile))
		otherCands := copyDir(t, shards[2])
		tamper(t, filepath.Join(otherCands, release.CandidatesFile))
		for _, tc := range []struct {
			name string
			dirs []string
			want string
		}{
			{"missing", shards[:3], "shard 3/4 missing"},
			{"duplicate", append(shards[:4:4], shards[2]), "shard 2/4 is given twice"},
			{"another list", []string{shards[0], shards[1], shards[2], otherList}, "another candidate list"},
			{"other record flags", []string{shards[0], shards[1], shards[2], otherFlags}, "shard 3/4 (" + otherFlags + ") was crawled with --timeout 3s, shard 0/4 (" + shards[0] + ") with 2s"},
			{"incomplete", []string{shards[0], shards[1], shards[2], unfinished}, unfinished + " is an incomplete shard"},
			{"not a shard", []string{notShard}, notShard + " is not a shard"},
			{"tampered", []string{shards[0], tampered, shards[2], shards[3]}, tampered},
			{"tampered candidates after the first", []string{shards[0], shards[1], otherCands, shards[3]}, otherCands + ": " + release.CandidatesFile},
			{"none", nil, "no shard folders"},
		} {
			out := filepath.Join(t.TempDir(), "merged")
			_, err := Merge(context.Background(), out, tc.dirs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: merge error %v, want one naming %q", tc.name, err, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s: a refused merge left its --out folder behind", tc.name)
			}
		}
	})
}

// checkMergedRelease holds the merge's release.json to the whole crawl's:
// the same counts, candidates and record-changing options, the shards
// named in order with the SHA-256 of their release.json.
func checkMergedRelease(t *testing.T, whole, merged string, shards []string) {
	t.Helper()
	w, err := release.Read(whole)
	if err != nil {
		t.Fatal(err)
	}
	m, err := release.Read(merged)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w.Counts, m.Counts) {
		t.Errorf("merged counts %+v, want the whole crawl's %+v", m.Counts, w.Counts)
	}
	if m.Candidates != w.Candidates || m.Options != recordOptions(w.Options) || m.Shard != nil {
		t.Errorf("merged release.json: candidates %+v options %+v shard %v; want %+v, %+v, none", m.Candidates, m.Options, m.Shard, w.Candidates, recordOptions(w.Options))
	}
	if len(m.Shards) != len(shards) {
		t.Fatalf("merged release.json names %d shards, want %d", len(m.Shards), len(shards))
	}
	for k, p := range m.Shards {
		_, b, err := release.ReadBytes(shards[k])
		if err != nil {
			t.Fatal(err)
		}
		if p.Index != k || p.ReleaseSHA256 != sha256Hex(b) || p.Concurrency != []int{1, 2, 5, 32}[k] {
			t.Errorf("shard %d named as %+v", k, p)
		}
	}
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// tamper flips the last byte of a file.
func tamper(t *testing.T, name string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
