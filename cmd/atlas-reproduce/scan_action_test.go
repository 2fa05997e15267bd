package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// actionFile is the part of action.yml the test reads.
type actionFile struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
}

// actionExpr is the one expression form the action uses: a context value,
// or a context value compared with a string.
var actionExpr = regexp.MustCompile(`\$\{\{\s*([a-z0-9_.-]+)(?:\s*==\s*'([^']*)')?\s*\}\}`)

// actionRunner runs a composite action's steps as the runner would, as far
// as that goes without GitHub: inputs, github.action_path and the steps'
// outputs are substituted, $GITHUB_OUTPUT and $GITHUB_PATH honoured; a
// `uses` step is recorded with its inputs, not run.
type actionRunner struct {
	t       *testing.T
	ctx     map[string]string
	path    []string // $GITHUB_PATH entries, newest first
	workdir string
	env     []string
}

func (r *actionRunner) eval(s string) string {
	return actionExpr.ReplaceAllStringFunc(s, func(m string) string {
		sub := actionExpr.FindStringSubmatch(m)
		v, ok := r.ctx[sub[1]]
		if !ok && !strings.HasPrefix(sub[1], "steps.") {
			r.t.Fatalf("%s: no such context value", sub[1])
		}
		if strings.Contains(m, "==") {
			return fmt.Sprint(v == sub[2])
		}
		return v
	})
}

// step runs one run step and returns its exit status and standard error.
func (r *actionRunner) step(st actionStep) (int, string) {
	dir := r.t.TempDir()
	out, gpath := filepath.Join(dir, "output"), filepath.Join(dir, "path")
	for _, f := range []string{out, gpath} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", st.Run)
	cmd.Dir = r.workdir
	cmd.Env = append(append([]string{}, r.env...), "GITHUB_OUTPUT="+out, "GITHUB_PATH="+gpath,
		"PATH="+strings.Join(append(append([]string{}, r.path...), os.Getenv("PATH")), string(os.PathListSeparator)))
	for k, v := range st.Env {
		cmd.Env = append(cmd.Env, k+"="+r.eval(v))
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			r.t.Fatalf("%s: %v", st.Name, err)
		}
		code = ee.ExitCode()
	}
	if b, _ := os.ReadFile(out); len(b) > 0 {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok && st.ID != "" {
				r.ctx["steps."+st.ID+".outputs."+k] = v
			}
		}
	}
	if b, _ := os.ReadFile(gpath); len(b) > 0 {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			r.path = append([]string{l}, r.path...)
		}
	}
	return code, stderr.String()
}

// copyTree copies the fixture repository, so that the action writes its
// log beside a copy, not into testdata.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAction holds action.yml to the command: a composite action whose
// first step sets up Go from the action's go.mod and whose scripts take
// inputs as variables, never spliced in. Run against a copy of the fixture
// repository as far as it goes without GitHub, its install step builds
// the command from the action's checkout, its scan writes a SARIF log
// valid against the 2.1.0 schema with the fixture's unpinned server, the
// upload step would get that log, and the last step fails the job on the
// open finding.
func TestAction(t *testing.T) {
	testenv.Need(t, "bash", "the action's steps are bash scripts")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	steps := a.Runs.Steps
	if a.Runs.Using != "composite" || len(steps) < 4 || !strings.HasPrefix(steps[0].Uses, "actions/setup-go@") ||
		steps[0].With["go-version-file"] != "${{ github.action_path }}/go.mod" {
		t.Fatalf("runs %+v: want a composite action that sets up Go from its go.mod first", a.Runs)
	}
	for _, st := range steps {
		if st.Run != "" && (st.Shell != "bash" || strings.Contains(st.Run, "${{")) {
			t.Errorf("step %q: shell %q; an expression in its script would splice an input into shell", st.Name, st.Shell)
		}
	}

	work := t.TempDir()
	copyTree(t, filepath.Join(root, "internal", "agentconfig", "testdata", "repo"), work)
	r := &actionRunner{t: t, workdir: work, ctx: map[string]string{"github.action_path": root}}
	gobin := t.TempDir()
	r.env = append(os.Environ(), "GOBIN="+gobin)
	for name, in := range a.Inputs {
		r.ctx["inputs."+name] = in.Default
	}
	// Inputs as a workflow would give them: list the configs (the
	// fixture's remote servers are not on this machine) and fail on an
	// unpinned server.
	for k, v := range map[string]string{"start-servers": "false", "fail-on": "unpinned", "sarif-file": "mcp.sarif"} {
		if _, ok := a.Inputs[k]; !ok {
			t.Fatalf("action.yml has no input %s", k)
		}
		r.ctx["inputs."+k] = v
	}

	var uploaded, failed bool
	for _, st := range steps[1:] {
		if st.If != "" && r.eval(st.If) != "true" {
			continue
		}
		if st.Uses != "" {
			if !strings.HasPrefix(st.Uses, "github/codeql-action/upload-sarif@") {
				t.Fatalf("step %q uses %s", st.Name, st.Uses)
			}
			uploaded = true
			file := filepath.Join(work, r.eval(st.With["sarif_file"]))
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("the upload step's sarif_file: %v", err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err == nil {
				err = sarifSchema(t).Validate(inst)
			}
			if err != nil {
				t.Fatalf("the uploaded log is not SARIF 2.1.0: %v\n%s", err, b)
			}
			githubSARIFRules(t, b)
			var log sarifOut
			if err := json.Unmarshal(b, &log); err != nil {
				t.Fatal(err)
			}
			var unpinned []string
			for _, run := range log.Runs {
				for _, res := range run.Results {
					if res.RuleID == "unpinned" {
						loc := res.Locations[0].PhysicalLocation
						unpinned = append(unpinned, fmt.Sprintf("%s:%d", loc.ArtifactLocation.URI, loc.Region.StartLine))
					}
				}
			}
			if len(unpinned) == 0 || !strings.HasPrefix(unpinned[0], ".") {
				t.Errorf("unpinned results at %v: want the fixture's servers, at paths relative to the checkout", unpinned)
			}
			continue
		}
		code, out := r.step(st)
		switch st.ID {
		case "scan":
			if code != 0 || r.ctx["steps.scan.outputs.exit-code"] != "1" {
				t.Fatalf("scan step: exit %d, exit-code %q; want 0 and the verdict 1\n%s", code, r.ctx["steps.scan.outputs.exit-code"], out)
			}
		case "":
			if strings.Contains(st.Run, "go install") {
				if code != 0 {
					t.Fatalf("install step: exit %d\n%s", code, out)
				}
				if _, err := os.Stat(filepath.Join(gobin, "atlas-reproduce")); err != nil {
					t.Fatalf("install step: %v", err)
				}
				continue
			}
			if strings.HasPrefix(st.Name, "Fail") {
				failed = code != 0
			} else if code != 0 {
				// The sandbox step does nothing when servers are not
				// started.
				t.Fatalf("step %q: exit %d\n%s", st.Name, code, out)
			}
		}
	}
	if !uploaded || !failed {
		t.Errorf("upload step run %v, job failed %v: want both", uploaded, failed)
	}
	if a.Outputs["sarif-file"].Value != "${{ steps.scan.outputs.sarif-file }}" || r.eval(a.Outputs["sarif-file"].Value) != "mcp.sarif" {
		t.Errorf("output sarif-file: %q", a.Outputs["sarif-file"].Value)
	}
}
