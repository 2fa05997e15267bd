package cpuquota

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// childEnv makes the test binary a child that waits for a line on stdin
// (its parent moves it into a cgroup meanwhile), then Fits and prints the
// Result as JSON.
const childEnv = "ATLAS_CPUQUOTA_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		bufio.NewReader(os.Stdin).ReadString('\n')
		r := Fit()
		json.NewEncoder(os.Stdout).Encode(struct {
			Result
			GOMAXPROCS int
		}{r, runtime.GOMAXPROCS(0)})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cpuCgroup is a cgroup made for a test, with a CPU quota.
type cpuCgroup struct {
	dir string
	v2  bool
}

// newCPUCgroup makes a cgroup beside the machine's root one, or skips the
// test where it cannot (not root, no cpu controller it may use).
func newCPUCgroup(t *testing.T) *cpuCgroup {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup with a CPU quota needs root; Fit's decision is held by TestFitted")
	}
	name := fmt.Sprintf("atlas-cpuquota-test-%d", os.Getpid())
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil {
		if !strings.Contains(" "+string(b), " cpu") {
			t.Skip("cgroup v2 without the cpu controller enabled for child cgroups")
		}
		return mkCgroup(t, filepath.Join("/sys/fs/cgroup", name), true)
	}
	for _, root := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"} {
		if _, err := os.Stat(filepath.Join(root, "cpu.cfs_quota_us")); err == nil {
			return mkCgroup(t, filepath.Join(root, name), false)
		}
	}
	t.Skip("no cgroup v1 cpu hierarchy or cgroup v2 found under /sys/fs/cgroup")
	return nil
}

func mkCgroup(t *testing.T, dir string, v2 bool) *cpuCgroup {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	// A cgroup is removed once its processes have exited.
	t.Cleanup(func() { os.Remove(dir) })
	return &cpuCgroup{dir, v2}
}

// setQuota gives the cgroup a quota of cpus CPUs.
func (c *cpuCgroup) setQuota(t *testing.T, cpus float64) {
	t.Helper()
	const period = 100000
	quota := strconv.Itoa(int(cpus * period))
	var err error
	if c.v2 {
		err = os.WriteFile(filepath.Join(c.dir, "cpu.max"), []byte(quota+" "+strconv.Itoa(period)), 0)
	} else {
		err = os.WriteFile(filepath.Join(c.dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(period)), 0)
		if err == nil {
			err = os.WriteFile(filepath.Join(c.dir, "cpu.cfs_quota_us"), []byte(quota), 0)
		}
	}
	if err != nil {
		t.Fatalf("setting the quota of %s: %v", c.dir, err)
	}
}

// fitIn runs Fit in a child process inside the cgroup, with env added to
// its environment, and returns what it found.
func (c *cpuCgroup) fitIn(t *testing.T, env ...string) (r Result, gomaxprocs int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0)
	stdin.Write([]byte("\n"))
	stdin.Close()
	if werr := cmd.Wait(); werr != nil || err != nil {
		t.Fatalf("child in %s: moving it: %v; its end: %v; its output: %s", c.dir, err, werr, out.String())
	}
	var got struct {
		Result
		GOMAXPROCS int
	}
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
		t.Fatalf("child's output %q: %v", out.String(), err)
	}
	return got.Result, got.GOMAXPROCS
}

// TestFitUnderCgroupQuota runs Fit in processes under real cgroup quotas:
// one CPU gives one P, one and a half leaves the runtime's default, and a
// GOMAXPROCS in the environment is left alone.
func TestFitUnderCgroupQuota(t *testing.T) {
	c := newCPUCgroup(t)
	ncpu := runtime.NumCPU()

	c.setQuota(t, 1)
	r, procs := c.fitIn(t)
	if r.Quota != 1 || r.After != 1 || procs != 1 {
		t.Errorf("under a quota of one CPU: %+v, GOMAXPROCS %d; want quota 1 and one P", r, procs)
	}

	c.setQuota(t, 0.5)
	if r, procs := c.fitIn(t); r.Quota != 0.5 || procs != 1 {
		t.Errorf("under a quota of half a CPU: %+v, GOMAXPROCS %d; want quota 0.5 and one P", r, procs)
	}

	c.setQuota(t, 1.5)
	if r, procs := c.fitIn(t); r.Quota != 1.5 || procs != r.Before || r.After != r.Before {
		t.Errorf("under a quota of 1.5 CPUs: %+v, GOMAXPROCS %d; want GOMAXPROCS left at %d", r, procs, r.Before)
	}

	c.setQuota(t, 1)
	if r, procs := c.fitIn(t, "GOMAXPROCS="+strconv.Itoa(ncpu)); r.Quota != 0 || procs != ncpu {
		t.Errorf("with GOMAXPROCS=%d set, under a quota of one CPU: %+v, GOMAXPROCS %d; want it left alone", ncpu, r, procs)
	}
}
