// Package bench times the census pipeline beside its limits and its
// baseline, on the same files in one run: bare decompression (the limit),
// the whole run pipeline, the Python reference (the baseline), and the
// classifier alone. Each figure is the median of several runs; the pipeline
// and the reference run as child processes so that each has its own peak
// RSS.
package bench

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/internal/gunzip"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// referencePy is the Python reference, embedded so that the benchmark runs
// from the binary alone.
//
//go:embed reference.py
var referencePy []byte

// Options configure a benchmark.
type Options struct {
	// Data are census folders, each timed once at scale 1, in order;
	// none means synthesise one per scale.
	Data []string
	// Tools is the 1× size of a synthesised census.
	Tools int
	// Scales multiply Tools (synthesised censuses only).
	Scales []int
	// MaxServerTools, when positive, also times at each scale a census with
	// a heavy tail (synth.Options.MaxServerTools), whose largest server has
	// MaxServerTools×scale tools: the giant lines of aggregator servers.
	MaxServerTools int
	// Runs is how many times each timing is taken; the median is reported.
	Runs int
	// PythonScales lists the scales at which the Python reference is timed
	// (it takes about half a minute per run at 1×).
	PythonScales []int
	// Binary is the atlas-reproduce executable to run the pipeline with.
	Binary string
	// Workers is passed to run (0: its default).
	Workers int
	// Work is a scratch folder.
	Work string
	// Logger receives progress lines; nil discards them.
	Logger *slog.Logger
}

// Row is the result at one scale.
type Row struct {
	Scale int
	// MaxServerTools is the heavy tail's largest server (0: no tail, or a
	// census given with Data).
	MaxServerTools int
	Tools          int64
	JSONBytes      int64
	GzBytes        int64
	Gunzip         time.Duration
	// GzipDC is `gzip -dc` of the same file into /dev/null, timed in the
	// same runs (0 when gzip is not installed); GzipDCCPU its CPU time
	// (user + system), which the machine's other load disturbs far less.
	GzipDC    time.Duration
	GzipDCCPU time.Duration
	// Pipeline is the whole run as a child process, PipelineCPU its CPU
	// time (user + system).
	Pipeline    time.Duration
	PipelineCPU time.Duration
	// WallRatio and CPURatio are the smallest and largest per-run ratio
	// of run to `gzip -dc` (wall time, then CPU time), taken in pairs in
	// the same iteration.
	WallRatio, CPURatio [2]float64
	// Load is the one-minute load average sampled before each run.
	Load Load
	// Name is the census folder's name when Data was given.
	Name string
	// LargestLine is the longest line of server_tools.jsonl.gz, in bytes.
	LargestLine int64
	RunRSS      int64 // bytes
	Python      time.Duration
	PythonRSS   int64
	// Classify is the classifier alone, single-threaded, over every
	// property of the census; Haystack is its input size.
	Classify   time.Duration
	Haystack   int64
	Properties int64
}

// Run benchmarks each scale and returns the rows.
func Run(ctx context.Context, opt Options) ([]Row, error) {
	defaults.Set(&opt.Runs, 3)
	py := filepath.Join(opt.Work, "reference.py")
	if err := os.WriteFile(py, referencePy, 0o644); err != nil {
		return nil, err
	}
	var rows []Row
	for _, data := range opt.Data {
		row, err := benchScale(ctx, opt, data, py, 1, 0)
		if err != nil {
			return nil, err
		}
		row.Name = filepath.Base(filepath.Clean(data))
		rows = append(rows, row)
	}
	if len(opt.Data) > 0 {
		return rows, nil
	}
	for _, scale := range opt.Scales {
		tails := []int{0}
		if opt.MaxServerTools > 0 {
			tails = append(tails, opt.MaxServerTools*scale)
		}
		for _, tail := range tails {
			data, err := synthesise(ctx, opt, scale, tail)
			if err != nil {
				return nil, err
			}
			row, err := benchScale(ctx, opt, data, py, scale, tail)
			os.RemoveAll(data)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// synthesise writes the synthetic census of scale, with a heavy tail of
// tail tools when positive, in the work folder.
func synthesise(ctx context.Context, opt Options, scale, tail int) (string, error) {
	data := filepath.Join(opt.Work, fmt.Sprintf("census-%dx", scale))
	so := synth.DefaultOptions()
	so.Tools, so.Servers = opt.Tools*scale, max(opt.Tools*scale*13089/229539, 1)
	so.MaxServerTools = tail
	if tail > 0 && so.Tools-tail < so.Servers-1 {
		return "", fmt.Errorf("bench: a heavy tail of %d tools does not fit in %d tools", tail, so.Tools)
	}
	defaults.Logger(opt.Logger).Info("bench: synthesising", "tools", so.Tools, "scale", scale, "largest_server_tools", tail, "dir", data)
	if _, err := synth.Write(ctx, data, so); err != nil {
		return "", err
	}
	return data, nil
}

func benchScale(ctx context.Context, opt Options, data, py string, scale, tail int) (Row, error) {
	row := Row{Scale: scale, MaxServerTools: tail}
	label := fmt.Sprintf("%d×", scale)
	if tail > 0 {
		label += " heavy tail"
	}
	tools := filepath.Join(data, release.ToolsFile)
	fi, err := os.Stat(tools)
	if err != nil {
		return row, err
	}
	row.GzBytes = fi.Size()
	sums := filepath.Join(data, release.SumsFile)

	gzipDC, _ := exec.LookPath("gzip")
	var gunzip, gzipTimes, gzipCPU, pipeline, pipeCPU, python []time.Duration
	for i := 0; i < opt.Runs; i++ {
		defaults.Logger(opt.Logger).Info("bench: "+label, "run", i+1, "of", opt.Runs)
		row.Load.sample()
		d, n, err := timeGunzip(tools)
		if err != nil {
			return row, err
		}
		gunzip, row.JSONBytes = append(gunzip, d), n
		if gzipDC != "" {
			d, cpu, err := timeGzipDC(ctx, gzipDC, tools)
			if err != nil {
				return row, err
			}
			gzipTimes, gzipCPU = append(gzipTimes, d), append(gzipCPU, cpu)
		}

		args := []string{"run", "--data", data, "--out", filepath.Join(opt.Work, "out"), "--progress=false"}
		if _, err := os.Stat(sums); err == nil {
			args = append(args, "--sha256sums", sums)
		} else {
			args = append(args, "--no-verify")
		}
		if opt.Workers > 0 {
			args = append(args, "--workers", fmt.Sprint(opt.Workers))
		}
		row.Load.sample()
		d, cpu, rss, err := timeChild(ctx, opt.Work, opt.Binary, args...)
		if err != nil {
			return row, fmt.Errorf("pipeline: %w", err)
		}
		pipeline, pipeCPU, row.RunRSS = append(pipeline, d), append(pipeCPU, cpu), max(row.RunRSS, rss)

		if contains(opt.PythonScales, scale) {
			d, _, rss, err := timeChild(ctx, opt.Work, "python3", "-c", pyPeakRSS, py, "census", tools)
			if err != nil {
				return row, fmt.Errorf("python reference: %w", err)
			}
			python, row.PythonRSS = append(python, d), max(row.PythonRSS, rss)
		}
	}
	row.Load.sample()
	row.Gunzip, row.GzipDC, row.Pipeline, row.Python = median(gunzip), median(gzipTimes), median(pipeline), median(python)
	row.GzipDCCPU, row.PipelineCPU = median(gzipCPU), median(pipeCPU)
	row.WallRatio[0], row.WallRatio[1] = ratioRange(pipeline, gzipTimes)
	row.CPURatio[0], row.CPURatio[1] = ratioRange(pipeCPU, gzipCPU)

	props, err := loadProperties(tools)
	if err != nil {
		return row, err
	}
	row.Tools, row.Properties, row.Haystack, row.LargestLine = props.tools, int64(len(props.spans)), props.haystack, props.largestLine
	var cl []time.Duration
	for i := 0; i < opt.Runs; i++ {
		cl = append(cl, props.classify())
	}
	row.Classify = median(cl)
	return row, nil
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// timeGunzip decompresses a file with the pipeline's reader, discarding the
// output: the time the pipeline cannot beat.
func timeGunzip(path string) (time.Duration, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	start := time.Now()
	zr, err := gunzip.NewReader(f)
	if err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(io.Discard, zr)
	return time.Since(start), n, err
}

// timeGzipDC times `gzip -dc path` into /dev/null: the ratio the census's
// users can check with their own tools. It returns wall and CPU time.
func timeGzipDC(ctx context.Context, gzip, path string) (time.Duration, time.Duration, error) {
	cmd := exec.CommandContext(ctx, gzip, "-dc", path)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("gzip -dc %s: %w", path, err)
	}
	return time.Since(start), cpuTime(cmd), nil
}

// cpuTime is a finished child's CPU time, user + system (its rusage from
// wait4).
func cpuTime(cmd *exec.Cmd) time.Duration {
	if cmd.ProcessState == nil {
		return 0
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// PeakRSSEnv names the environment variable through which a child run is
// asked to write its peak RSS, in bytes, to a file as it exits.
const PeakRSSEnv = "ATLAS_REPRODUCE_PEAK_RSS_FILE"

// PeakRSS returns this process's peak resident set (VmHWM) in bytes.
//
// Not getrusage: Go starts children with clone(CLONE_VM|CLONE_VFORK), and
// Linux carries the parent's address-space high-water mark into the child's
// ru_maxrss across exec, so a child's rusage reports at least the peak of
// the benchmark process itself. VmHWM belongs to the new address space only.
func PeakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", v, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

// WritePeakRSS writes PeakRSS to path, for the harness to read.
func WritePeakRSS(path string) {
	if n, err := PeakRSS(); err == nil {
		os.WriteFile(path, []byte(fmt.Sprint(n)), 0o644)
	}
}

// pyPeakRSS runs a Python script as __main__ and writes its VmHWM to the
// file named by PeakRSSEnv, like the Go binary does.
const pyPeakRSS = `import os, runpy, sys
path = sys.argv[1]
sys.argv = sys.argv[1:]
try:
    runpy.run_path(path, run_name="__main__")
finally:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            with open(os.environ["` + PeakRSSEnv + `"], "w") as f:
                f.write(str(int(line.split()[1]) * 1024))
`

// timeChild runs a command and returns its wall time, its CPU time (user +
// system) and the peak RSS it reported through PeakRSSEnv.
func timeChild(ctx context.Context, work, name string, args ...string) (time.Duration, time.Duration, int64, error) {
	rssFile := filepath.Join(work, "peak-rss")
	os.Remove(rssFile)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), PeakRSSEnv+"="+rssFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	b, err := os.ReadFile(rssFile)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s did not report its peak RSS: %w", name, err)
	}
	var rss int64
	if _, err := fmt.Sscan(string(b), &rss); err != nil {
		return 0, 0, 0, fmt.Errorf("%s peak RSS %q: %w", name, b, err)
	}
	return d, cpuTime(cmd), rss, nil
}

// properties are every (name, description) of a census, decoded once into
// one arena, so that the classifier can be timed without the decoder.
type properties struct {
	arena       []byte
	spans       [][4]int32
	tools       int64
	haystack    int64
	largestLine int64
}

func loadProperties(path string) (*properties, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gunzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	p := &properties{}
	dec := census.NewDecoder()
	lr := census.NewLineReader(zr)
	for {
		line, err := lr.Next()
		if err == io.EOF {
			return p, nil
		}
		if err != nil {
			return nil, err
		}
		p.largestLine = max(p.largestLine, int64(len(line)))
		if census.IsBlank(line) {
			continue
		}
		rec, err := dec.Decode(line)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, lr.Line(), err)
		}
		for _, t := range rec.Tools {
			p.tools++
			for _, pr := range t.Properties {
				a := int32(len(p.arena))
				p.arena = append(p.arena, pr.Name...)
				b := int32(len(p.arena))
				p.arena = append(p.arena, pr.Description...)
				p.spans = append(p.spans, [4]int32{a, b, b, int32(len(p.arena))})
				p.haystack += int64(len(pr.Name) + 3 + len(pr.Description))
			}
		}
	}
}

func (p *properties) classify() time.Duration {
	runtime.GC()
	start := time.Now()
	var sink classify.Set
	for _, s := range p.spans {
		sink |= classify.PropertyBytes(p.arena[s[0]:s[1]], p.arena[s[2]:s[3]])
	}
	d := time.Since(start)
	if sink == 0xFFFF {
		panic("unreachable")
	}
	return d
}

// WriteHeadline prints the headline table as Markdown: per census, `gzip
// -dc` and run, wall and CPU time (medians), their ratios with the per-run
// range, and the load average during the loop. A wall ratio measured under
// load is inflated; the CPU ratio is the steadier figure.
func WriteHeadline(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| census | tools | `gzip -dc` wall s | `run` wall s | wall ratio (range) | `gzip -dc` CPU s | `run` CPU s | CPU ratio (range) | peak RSS MB | load average |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("synthetic %d×", r.Scale)
			if r.MaxServerTools > 0 {
				name += fmt.Sprintf(" heavy tail (%d)", r.MaxServerTools)
			}
		}
		ratio := func(a, b time.Duration, rg [2]float64) string {
			if a == 0 || b == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f× (%.2f–%.2f)", a.Seconds()/b.Seconds(), rg[0], rg[1])
		}
		secs := func(d time.Duration) string {
			if d == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f", d.Seconds())
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %.0f | %s |\n",
			name, r.Tools, secs(r.GzipDC), secs(r.Pipeline), ratio(r.Pipeline, r.GzipDC, r.WallRatio),
			secs(r.GzipDCCPU), secs(r.PipelineCPU), ratio(r.PipelineCPU, r.GzipDCCPU, r.CPURatio),
			float64(r.RunRSS)/1e6, r.Load)
	}
}

// WriteTable prints the rows as Markdown.
func WriteTable(w io.Writer, rows []Row) {
	mbps := func(n int64, d time.Duration) string {
		if d == 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f", float64(n)/1e6/d.Seconds())
	}
	secs := func(d time.Duration) string {
		if d == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", d.Seconds())
	}
	ratio := func(a, b time.Duration) string {
		if a == 0 || b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", a.Seconds()/b.Seconds())
	}
	fmt.Fprintln(w, "| scale | tools | JSON MB | gunzip s (limit) | pipeline s | pipeline/limit | tools/s | MB/s | peak RSS MB | Python s | Python/pipeline | Python RSS MB | classifier MB/s (1 core) | properties/s | largest server | largest line MB | gzip -dc s | pipeline/gzip -dc |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		rss := func(b int64) string {
			if b == 0 {
				return "–"
			}
			return fmt.Sprintf("%.0f", float64(b)/1e6)
		}
		scale := fmt.Sprintf("%d×", r.Scale)
		tail := "–"
		if r.MaxServerTools > 0 {
			scale += " heavy tail"
			tail = fmt.Sprint(r.MaxServerTools)
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %s | %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %.0f | %s | %.1f | %s | %s |\n",
			scale, r.Tools, float64(r.JSONBytes)/1e6, secs(r.Gunzip), secs(r.Pipeline), ratio(r.Pipeline, r.Gunzip),
			float64(r.Tools)/r.Pipeline.Seconds(), mbps(r.JSONBytes, r.Pipeline), rss(r.RunRSS),
			secs(r.Python), ratio(r.Python, r.Pipeline), rss(r.PythonRSS),
			mbps(r.Haystack, r.Classify), float64(r.Properties)/r.Classify.Seconds(),
			tail, float64(r.LargestLine)/1e6, secs(r.GzipDC), ratio(r.Pipeline, r.GzipDC))
	}
}
