// Package slurm_test starts a one-node Slurm cluster (munge, slurmctld and
// slurmd from the distribution's packages) and submits a census crawl to
// it with submit.sh, as a maintainer would on a real one.
package slurm_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSlurmArrayCrawl submits the crawl of twelve loopback servers as four
// array tasks and the merge as a job that depends on them, and checks the
// merged release byte for byte against one crawl of the same candidates.
func TestSlurmArrayCrawl(t *testing.T) {
	tools := map[string]string{}
	for _, name := range []string{"slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "munged"} {
		tools[name] = testenv.Need(t, name, "a one-node Slurm cluster; apt-get install -y slurmctld slurmd slurm-client munge")
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "a one-node Slurm cluster needs root: slurmd starts the jobs as their submitter")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "atlas-reproduce")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(testenv.Root(), "cmd", "atlas-reproduce")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	candidates := filepath.Join(dir, "candidates.jsonl")
	var lines []string
	for i := range 12 {
		lines = append(lines, fmt.Sprintf(`{"url": %q}`, mcpServer(t, i)))
	}
	if err := os.WriteFile(candidates, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := startCluster(t, dir, tools)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	census := filepath.Join(dir, "census")
	env := append(os.Environ(), "SLURM_CONF="+conf, "ATLAS="+bin, "CANDIDATES="+candidates, "CENSUS="+census,
		"CRAWL_FLAGS=--allow-private --timeout 20s")
	submit := exec.CommandContext(ctx, filepath.Join(testenv.Root(), "deploy", "slurm", "submit.sh"), "4",
		"--mem=200M", "--output="+filepath.Join(dir, "job-%A_%a.out"))
	submit.Env = env
	out, err := submit.CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`^crawl (\d+) merge (\d+)\n$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("submit.sh said %q, want the two job ids", out)
	}
	if state := waitJob(ctx, t, tools["scontrol"], env, m[2]); state != "COMPLETED" {
		logs, _ := filepath.Glob(filepath.Join(dir, "job-*.out"))
		var b strings.Builder
		for _, l := range logs {
			c, _ := os.ReadFile(l)
			fmt.Fprintf(&b, "%s:\n%s\n", filepath.Base(l), c)
		}
		t.Fatalf("the merge job ended %s\n%s", state, b.String())
	}
	for k := range 4 {
		if _, err := os.Stat(filepath.Join(census, "shards", fmt.Sprint(k), "release.json")); err != nil {
			t.Errorf("shard %d: %v", k, err)
		}
	}

	one := filepath.Join(dir, "one")
	crawl := exec.CommandContext(ctx, bin, "crawl", "--candidates", candidates, "--out", one, "--no-elapsed", "--allow-private", "--timeout", "20s")
	if out, err := crawl.CombinedOutput(); err != nil {
		t.Fatalf("one crawl: %v\n%s", err, out)
	}
	merged := filepath.Join(census, "release")
	ents, err := os.ReadDir(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) < 5 {
		t.Fatalf("the merged release holds %d files", len(ents))
	}
	for _, e := range ents {
		got, err := os.ReadFile(filepath.Join(merged, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(one, e.Name()))
		if err != nil {
			t.Errorf("one crawl wrote no %s: %v", e.Name(), err)
			continue
		}
		switch e.Name() {
		case "release.json":
			// Its crawl times and shard list are the run's own.
			continue
		case "SHA256SUMS":
			want, got = withoutLine(want, "release.json"), withoutLine(got, "release.json")
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s of the Slurm release differs from one crawl's", e.Name())
		}
	}
}

// mcpServer serves a loopback MCP server with i%3+1 tools until the test
// ends, and returns its endpoint.
func mcpServer(t *testing.T, i int) string {
	s := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("slurm-test-%02d", i), Version: "1"}, nil)
	type in struct {
		Path string `json:"path" jsonschema:"a file path"`
	}
	for k := range i%3 + 1 {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("read_%d", k), Description: "reads a file"},
			func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// startCluster starts munged, slurmctld and slurmd for one node, this
// machine, with every file in dir, until the test ends, and returns the
// configuration's path once the node takes jobs.
func startCluster(t *testing.T, dir string, tools map[string]string) string {
	munge := filepath.Join(dir, "munge")
	state, spool := filepath.Join(dir, "state"), filepath.Join(dir, "spool")
	for _, d := range []string{munge, state, spool} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	if f, err := os.Open("/dev/urandom"); err != nil {
		t.Fatal(err)
	} else {
		_, _ = f.Read(key)
		f.Close()
	}
	if err := os.WriteFile(filepath.Join(munge, "key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(munge, "sock")
	daemon(t, tools["munged"], "--foreground", "--force", "--key-file="+filepath.Join(munge, "key"), "--socket="+sock,
		"--pid-file="+filepath.Join(munge, "pid"), "--log-file="+filepath.Join(munge, "log"), "--seed-file="+filepath.Join(munge, "seed"))
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	conf := filepath.Join(dir, "slurm.conf")
	text := fmt.Sprintf(`ClusterName=atlastest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[4]s
CredType=cred/munge
StateSaveLocation=%[5]s
SlurmdSpoolDir=%[6]s
SlurmctldPidFile=%[7]s/slurmctld.pid
SlurmdPidFile=%[7]s/slurmd.pid
SlurmctldLogFile=%[7]s/slurmctld.log
SlurmdLogFile=%[7]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, freePort(t), freePort(t), sock, state, spool, dir)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, sock)
	daemon(t, tools["slurmctld"], "-D", "-i", "-f", conf)
	daemon(t, tools["slurmd"], "-D", "-f", conf, "-N", host)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for {
		cmd := exec.CommandContext(ctx, tools["sinfo"], "--noheader", "--format=%T")
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		out, _ := cmd.Output()
		if strings.TrimSpace(string(out)) == "idle" {
			return conf
		}
		select {
		case <-ctx.Done():
			log, _ := os.ReadFile(filepath.Join(dir, "slurmd.log"))
			t.Fatalf("the node never took jobs (sinfo: %q)\n%s", out, log)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// daemon runs a cluster daemon in the foreground until the test ends.
func daemon(t *testing.T, name string, args ...string) {
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}

// waitFor waits for munged's socket.
func waitFor(t *testing.T, path string) {
	for range 200 {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("munged made no socket %s", path)
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitJob waits for job id to end and returns its state.
func waitJob(ctx context.Context, t *testing.T, scontrol string, env []string, id string) string {
	re := regexp.MustCompile(`JobState=(\S+)`)
	for {
		cmd := exec.CommandContext(ctx, scontrol, "show", "job", id)
		cmd.Env = env
		out, _ := cmd.Output()
		if m := re.FindSubmatch(out); m != nil {
			switch s := string(m[1]); s {
			case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING":
			default:
				return s
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s did not end: %s", id, out)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// withoutLine drops the lines of b that end with name.
func withoutLine(b []byte, name string) []byte {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasSuffix(l, " "+name) && !strings.HasSuffix(l, "*"+name) {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}
