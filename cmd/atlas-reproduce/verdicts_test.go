package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodotest"
)

// publishedRun runs the census in data and writes its deposit (no
// upload); with servers != 0 the published table is altered by that many
// servers first, so that a run over the deposit does not reproduce it.
func publishedRun(t *testing.T, data string, servers float64) (run, dep string) {
	t.Helper()
	run = filepath.Join(t.TempDir(), "run")
	if _, stderr, code := runCmd(t, "run", "--data", data, "--out", run, "--sha256sums", filepath.Join(data, release.SumsFile), "--progress=false"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if servers != 0 {
		p := filepath.Join(run, "report.json")
		b, _ := os.ReadFile(p)
		var rep map[string]any
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		rep["servers"] = rep["servers"].(float64) + servers
		b, _ = json.Marshal(rep)
		os.WriteFile(p, b, 0o644)
	}
	dep = filepath.Join(t.TempDir(), "deposit")
	if _, stderr, code := runCmd(t, "publish", "--data", data, "--run", run, "--out", dep, "--date", "2026-11-01"); code != 0 {
		t.Fatalf("publish: exit %d\n%s", code, stderr)
	}
	return run, dep
}

func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return run(t, "", args...)
}

// TestRunOnDepositJudges: run over a deposit prints its verdict and exits
// by the table without --require-reproduced; the verdict is in report.md,
// report.html and report.json; running again into the same folder works.
func TestRunOnDepositJudges(t *testing.T) {
	data, _ := makeCensus(t, 400)
	_, good := publishedRun(t, data, 0)
	_, bad := publishedRun(t, data, 1)
	for _, tc := range []struct {
		name, dep, verdict string
		code               int
	}{
		{"reproduced", good, "REPRODUCED", exitOK},
		{"not reproduced", bad, "NOT REPRODUCED", exitVerdict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			for i := range 2 { // the second run finds the first one's outputs
				stdout, stderr, code := runCmd(t, "run", "--data", tc.dep, "--out", out, "--progress=false")
				if code != tc.code || !strings.Contains(stdout, "**"+tc.verdict+"**") {
					t.Fatalf("run %d: exit %d, want %d printing %s\n%s\n%s", i+1, code, tc.code, tc.verdict, stdout, stderr)
				}
			}
			md, _ := os.ReadFile(filepath.Join(out, "report.md"))
			html, _ := os.ReadFile(filepath.Join(out, "report.html"))
			js, _ := os.ReadFile(filepath.Join(out, "report.json"))
			if !strings.Contains(string(md), "Verdict: **"+tc.verdict+"** against the deposit's published table") {
				t.Errorf("report.md does not carry the verdict:\n%.600s", md)
			}
			if !strings.Contains(string(html), `<span class="word">`+tc.verdict+`</span> against the deposit`) || strings.Contains(string(html), "No verdict") {
				t.Errorf("report.html does not carry the verdict")
			}
			var rep struct {
				Deposit *struct{ Verdict string } `json:"deposit"`
			}
			if json.Unmarshal(js, &rep); rep.Deposit == nil || rep.Deposit.Verdict != tc.verdict {
				t.Errorf("report.json deposit = %+v, want %s", rep.Deposit, tc.verdict)
			}
		})
	}
}

// TestPublishRefusesAnotherReleasesDeposit: an --out folder holding the
// deposit of another release is not uploaded for this one, with --zenodo
// as without it; and a publish that fails leaves no --out folder.
func TestPublishRefusesAnotherReleasesDeposit(t *testing.T) {
	z := zenodotest.New(t, testToken)
	dataA, _ := makeCensus(t, 300)
	dataB, _ := makeCensus(t, 350)
	runA, _ := publishedRun(t, dataA, 0)
	_, depB := publishedRun(t, dataB, 0)
	env := []string{"ZENODO_TOKEN=" + testToken}
	for _, extra := range [][]string{nil, {"--zenodo", z.URL}} {
		args := append([]string{"publish", "--data", dataA, "--run", runA, "--out", depB, "--date", "2026-11-01"}, extra...)
		stdout, stderr, code := runWithEnv(t, env, args...)
		if code != exitFailure || strings.Contains(stdout, "record ") {
			t.Errorf("%v: exit %d, want %d and no upload\n%s\n%s", extra, code, exitFailure, stdout, stderr)
		}
	}
	if n := len(z.Requests()); n != 0 {
		t.Errorf("Zenodo got %d requests for another release's deposit", n)
	}
	out := filepath.Join(t.TempDir(), "never")
	// The run is of release A, the data release B: refused once the zip
	// of B is written, inside the new folder.
	if _, stderr, code := runWithEnv(t, env, "publish", "--data", dataB, "--run", runA, "--out", out, "--date", "2026-11-01"); code != exitFailure || !strings.Contains(stderr, "not of this release") {
		t.Errorf("publish of another release's run: exit %d, want %d\n%s", code, exitFailure, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed publish left %s behind", out)
	}
}

// TestExitCodesOfEachCommand holds the exit-code table of
// docs/exit-codes.md for the commands that judge and the commands this
// table moved failures of, calling their run functions with options
// structs, no flags parsed.
func TestExitCodesOfEachCommand(t *testing.T) {
	z := zenodotest.New(t, testToken)
	data, _ := makeCensus(t, 300)
	runDir, good := publishedRun(t, data, 0)
	_, bad := publishedRun(t, data, 1)
	env := func() (*cmdEnv, *strings.Builder) {
		var b strings.Builder
		return &cmdEnv{stdout: &b, stderr: &b}, &b
	}
	var rf runFlags
	rf.maxLine, rf.memRoom.bytes = 1<<20, 0
	ctx := t.Context()
	var published string
	for _, tc := range []struct {
		name string
		code int
		say  string
		run  func(env *cmdEnv) error
	}{
		{"run on a reproduced deposit", exitOK, "**REPRODUCED**", func(env *cmdEnv) error {
			return runCensusRun(ctx, env, runOptions{data: good, out: filepath.Join(t.TempDir(), "o"), flags: rf})
		}},
		{"run on a deposit not reproduced", exitVerdict, "**NOT REPRODUCED**", func(env *cmdEnv) error {
			return runCensusRun(ctx, env, runOptions{data: bad, out: filepath.Join(t.TempDir(), "o"), flags: rf})
		}},
		{"run --require-reproduced, counts not the truth", exitVerdict, "DIFFERS FROM TRUTH", func(env *cmdEnv) error {
			f := rf
			f.sums = filepath.Join(data, release.SumsFile)
			f.truth = filepath.Join(t.TempDir(), "other.json") // another census's truth
			os.WriteFile(f.truth, []byte(`{"tools": 1, "classes": {}, "buckets": {}, "shapes": {}}`), 0o644)
			return runCensusRun(ctx, env, runOptions{data: data, out: filepath.Join(t.TempDir(), "o"), flags: f, requireReproduced: true})
		}},
		{"run on a deposit into the deposit", exitUsage, "is the deposit itself", func(env *cmdEnv) error {
			return runCensusRun(ctx, env, runOptions{data: good, out: good + "/.", flags: rf})
		}},
		{"run on missing data", exitFailure, "", func(env *cmdEnv) error {
			return runCensusRun(ctx, env, runOptions{data: filepath.Join(t.TempDir(), "none"), out: filepath.Join(t.TempDir(), "o"), flags: rf})
		}},
		{"run with a bad release id", exitUsage, "--release-id", func(env *cmdEnv) error {
			return runCensusRun(ctx, env, runOptions{data: good, out: filepath.Join(t.TempDir(), "o"), flags: rf, releaseID: "a b"})
		}},
		{"merge of a folder that is no shard", exitFailure, "is an incomplete shard", func(env *cmdEnv) error {
			return merge(ctx, env, mergeOptions{out: filepath.Join(t.TempDir(), "m"), shards: []string{t.TempDir()}})
		}},
		{"publish to Zenodo", exitOK, "record ", func(env *cmdEnv) error {
			o := publishOptions{zenodo: z.URL, token: testToken, publish: true, retries: 0}
			o.write.Data, o.write.Run, o.write.Out, o.write.Date = data, runDir, filepath.Join(t.TempDir(), "d"), "2026-11-01"
			err := publishRun(ctx, env, o)
			if m := recordLine.FindStringSubmatch(env.stdout.(*strings.Builder).String()); m != nil {
				published = m[1]
			}
			return err
		}},
		{"publish with a refused token", exitFailure, "", func(env *cmdEnv) error {
			o := publishOptions{zenodo: z.URL, token: "wrong", retries: 0}
			o.write.Data, o.write.Run, o.write.Out, o.write.Date = data, runDir, filepath.Join(t.TempDir(), "d"), "2026-11-01"
			return publishRun(ctx, env, o)
		}},
		{"fetch the published record", exitOK, release.SumsFile, func(env *cmdEnv) error {
			return fetchRun(ctx, env, fetchOptions{flags: fetchFlags{dest: t.TempDir(), records: listFlag{published}, baseURL: z.URL, timeout: time.Minute}})
		}},
		{"fetch a record that is not there", exitFailure, "", func(env *cmdEnv) error {
			return fetchRun(ctx, env, fetchOptions{flags: fetchFlags{dest: t.TempDir(), records: listFlag{"999999"}, baseURL: z.URL, timeout: time.Minute}})
		}},
		{"reproduce the published record", exitOK, "**REPRODUCED**", func(env *cmdEnv) error {
			return reproduce(ctx, env, reproduceOptions{fetch: fetchFlags{dest: t.TempDir(), records: listFlag{published}, baseURL: z.URL, timeout: time.Minute}, out: filepath.Join(t.TempDir(), "o"), run: rf})
		}},
		{"reproduce without --out", exitUsage, "--out", func(env *cmdEnv) error {
			return reproduce(ctx, env, reproduceOptions{fetch: fetchFlags{dest: t.TempDir(), records: listFlag{published}, baseURL: z.URL}, run: rf})
		}},
		{"diff --fail-on a gained class", exitVerdict, "--fail-on", func(env *cmdEnv) error {
			oldRun := runCensus(t, `{"server_id": "a", "tools": [{"name": "q", "inputSchema": {"properties": {"query": {}}}}]}`)
			newRun := runCensus(t, `{"server_id": "a", "tools": [{"name": "q", "inputSchema": {"properties": {"cmd": {"description": "shell command"}}}}]}`)
			return diff(ctx, env, diffOptions{old: oldRun, new: newRun, json: true, failOn: []string{"gg:command-string"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, out := env()
			err := tc.run(e)
			if got := exitStatus(err); got != tc.code {
				t.Fatalf("exit status %d (err %v), want %d\n%s", got, err, tc.code, out)
			}
			if msg := out.String() + fmt.Sprint(err); !strings.Contains(msg, tc.say) {
				t.Errorf("output and error lack %q:\n%s", tc.say, msg)
			}
		})
	}
}

// TestParseJudgingCommands: the command lines of fetch, merge, publish,
// reproduce and run parse into the options their run functions take, and
// bad ones are usage errors naming what is wrong.
func TestParseJudgingCommands(t *testing.T) {
	t.Setenv("H49_TOKEN", "tok")
	for _, tc := range []struct {
		name    string
		parse   func(env *cmdEnv) (any, error)
		check   func(o any) bool
		wantErr string
	}{
		{"merge", func(env *cmdEnv) (any, error) { return parseMerge(env, []string{"a", "--out", "m", "b"}) },
			func(o any) bool {
				m := o.(mergeOptions)
				return m.out == "m" && strings.Join(m.shards, " ") == "a b"
			}, ""},
		{"merge without shards", func(env *cmdEnv) (any, error) { return parseMerge(env, []string{"--out", "m"}) }, nil, "folders of every shard"},
		{"fetch", func(env *cmdEnv) (any, error) {
			return parseFetch(env, []string{"--dest", "d", "--record", "1,2", "--progress=false", "--retries", "0"})
		}, func(o any) bool {
			f := o.(fetchOptions)
			return f.flags.dest == "d" && strings.Join(f.flags.records, " ") == "1 2" && !f.progress && f.flags.retries == 0
		}, ""},
		{"fetch with an argument", func(env *cmdEnv) (any, error) { return parseFetch(env, []string{"--dest", "d", "x"}) }, nil, `unexpected argument "x"`},
		{"publish", func(env *cmdEnv) (any, error) {
			return parsePublish(env, []string{"--data", "a", "--run", "r", "--out", "o", "--zenodo", "http://127.0.0.1:1", "--token-env", "H49_TOKEN", "--draft", "42", "--publish"})
		}, func(o any) bool {
			p := o.(publishOptions)
			return p.write.Data == "a" && p.write.Run == "r" && p.write.Out == "o" && p.token == "tok" && p.draft == "42" && p.publish && p.zenodo == "http://127.0.0.1:1"
		}, ""},
		{"publish without a token", func(env *cmdEnv) (any, error) {
			return parsePublish(env, []string{"--data", "a", "--run", "r", "--out", "o", "--zenodo", "http://127.0.0.1:1", "--token-env", "H49_NONE"})
		}, nil, "H49_NONE"},
		{"publish --concept and --draft", func(env *cmdEnv) (any, error) {
			return parsePublish(env, []string{"--data", "a", "--run", "r", "--out", "o", "--zenodo", "http://x", "--token-env", "H49_TOKEN", "--concept", "1", "--draft", "2"})
		}, nil, "contradict"},
		{"reproduce", func(env *cmdEnv) (any, error) {
			return parseReproduce(env, []string{"--dest", "d", "--out", "o", "--record", "7", "--workers", "3"})
		}, func(o any) bool {
			r := o.(reproduceOptions)
			return r.fetch.dest == "d" && r.out == "o" && r.run.workers == 3 && strings.Join(r.fetch.records, "") == "7"
		}, ""},
		{"run", func(env *cmdEnv) (any, error) {
			return parseRun(env, []string{"--data", "d", "--out", "o", "--require-reproduced", "--release-id", "r1"})
		}, func(o any) bool {
			r := o.(runOptions)
			return r.data == "d" && r.out == "o" && r.requireReproduced && r.releaseID == "r1"
		}, ""},
		{"run without --out", func(env *cmdEnv) (any, error) { return parseRun(env, []string{"--data", "d"}) }, nil, "--out DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			o, err := tc.parse(&cmdEnv{stdout: &b, stderr: &b})
			if tc.wantErr != "" {
				if exitStatus(err) != exitUsage || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v (exit %d), want a usage error saying %q", err, exitStatus(err), tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(o) {
				t.Errorf("parsed %+v, %v", o, err)
			}
		})
	}
}
