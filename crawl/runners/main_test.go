package runners

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// TestMain fails the package's tests when a goroutine is left behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ran is what one package's probe found, with the names of its tools.
type ran struct {
	probe.Result
	tools []string
}

// runAll installs and probes the packages of coords with the runners of
// popt, as a crawl's package workers do (one Set, each package in turn),
// from loopback registries, and returns each one's result by coordinate.
func runAll(t *testing.T, popt Options, timeout time.Duration, maxBytes int64, coords ...string) map[string]ran {
	t.Helper()
	var pkgs []*Package
	for _, c := range coords {
		p, err := ParsePackageID(c)
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	p := probe.NewProber(probe.Options{Timeout: timeout, MaxBytes: maxBytes, AllowAddr: probe.AnyAddr})
	set, err := New(context.Background(), p, &popt, pkgs)
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	defer set.Close()
	out := map[string]ran{}
	for _, pkg := range pkgs {
		r := ran{Result: set.Probe(context.Background(), 0, pkg)}
		for _, tool := range r.Tools {
			var named struct{ Name string }
			if err := json.Unmarshal(tool, &named); err != nil {
				t.Fatal(err)
			}
			r.tools = append(r.tools, named.Name)
		}
		out[pkg.ID()] = r
	}
	return out
}

// crawlTimeout bounds one packaged server's probe in these tests: an
// install and node's first start on a busy machine.
const crawlTimeout = 8 * time.Second
