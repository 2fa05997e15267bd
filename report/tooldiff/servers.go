package tooldiff

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// reachability adds the servers reachable in one release only, when both
// releases' servers.jsonl were found (see serversFile) and say which
// servers were reachable. It is best effort: a release without the file,
// or whose records carry no "reachable", leaves the counts out.
func reachability(oldServers, newServers string, d *report.ToolDiff) {
	oldR, ok := readReachable(oldServers)
	if !ok {
		return
	}
	newR, ok := readReachable(newServers)
	if !ok {
		return
	}
	var oldOnly, newOnly int64
	for _, id := range oldR.order {
		o := oldR.reachable[id]
		n, inNew := newR.reachable[id]
		if !inNew {
			continue
		}
		switch {
		case o && !n:
			oldOnly++
			if len(d.First.ReachableOldOnly) < 20 {
				d.First.ReachableOldOnly = append(d.First.ReachableOldOnly, id)
			}
		case !o && n:
			newOnly++
			if len(d.First.ReachableNewOnly) < 20 {
				d.First.ReachableNewOnly = append(d.First.ReachableNewOnly, id)
			}
		}
	}
	d.Servers.ReachableOldOnly, d.Servers.ReachableNewOnly = &oldOnly, &newOnly
}

// serversFile finds a run's servers.jsonl: in the run folder itself, or
// where its report.json says the run read it (a plain file, not a zip
// member).
func serversFile(dir string) string {
	plain := strings.TrimSuffix(release.ServersFile, ".gz")
	for _, name := range []string{release.ServersFile, plain} {
		if p := filepath.Join(dir, name); isFile(p) {
			return p
		}
	}
	f, err := openreg.Open(filepath.Join(dir, "report.json"))
	if err != nil {
		return ""
	}
	defer f.Close()
	r, err := report.ReadJSON(f)
	if err != nil {
		return ""
	}
	for _, in := range r.Inputs {
		if strings.HasPrefix(in.Name, plain) && !strings.Contains(in.Location, "!") && isFile(in.Location) {
			return in.Location
		}
	}
	return ""
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

type reachable struct {
	reachable map[string]bool
	order     []string
}

func readReachable(path string) (*reachable, bool) {
	if path == "" {
		return nil, false
	}
	r, err := openreg.OpenGunzipped(path)
	if err != nil {
		return nil, false
	}
	defer r.Close()
	out := &reachable{reachable: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var rec struct {
			ServerID  *string `json:"server_id"`
			Reachable *bool   `json:"reachable"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.ServerID == nil || rec.Reachable == nil {
			continue
		}
		if _, seen := out.reachable[*rec.ServerID]; !seen {
			out.order = append(out.order, *rec.ServerID)
		}
		out.reachable[*rec.ServerID] = *rec.Reachable
	}
	if sc.Err() != nil || len(out.order) == 0 {
		return nil, false
	}
	return out, true
}
