package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchema compiles the SARIF 2.1.0 schema committed under testdata
// (its source is in testdata/sarif/SOURCE).
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	const id = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sarifOut is the part of a config scan's SARIF log the test reads.
type sarifOut struct {
	Runs []struct {
		AutomationDetails struct{ ID string } `json:"automationDetails"`
		Invocations       []struct {
			ToolExecutionNotifications []struct {
				Message struct{ Text string }
			} `json:"toolExecutionNotifications"`
		}
		Tool struct {
			Driver struct{ Rules []struct{ ID string } }
		}
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string }
					Region           struct{ StartLine int }
				}
			}
			PartialFingerprints map[string]string
			Suppressions        []struct{ Kind, Status, Justification string }
		}
	}
}

// TestScanConfigSARIF scans a repository with two config files (a
// loopback server whose tools changed since the lock, one of its findings
// suppressed; an unpinned npx server) as SARIF: the log is valid against
// the SARIF 2.1.0 schema, has one run per config file with its own
// automationDetails.id, locates each result at its server's file and line,
// and keeps its fingerprints when the server moves down the file.
func TestScanConfigSARIF(t *testing.T) {
	schema := sarifSchema(t)
	s := mcp.NewServer(&mcp.Implementation{Name: "sarif", Version: "1"}, nil)
	addTool(s, "run_shell", "run a command", `{"type":"object","properties":{"command":{"type":"string","description":"shell command"}}}`)
	addTool(s, "login", "log in", `{"type":"object","properties":{"api_key":{"type":"string"}}}`)
	repo := loopbackConfig(t, s)
	vscode := "{\n  \"servers\": {\n    \"docs\": {\"command\": \"npx\", \"args\": [\"-y\", \"docs-mcp\"]}\n  }\n}\n"
	if err := os.MkdirAll(filepath.Join(repo, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".vscode", "mcp.json"), []byte(vscode), 0o644); err != nil {
		t.Fatal(err)
	}
	sup := filepath.Join(repo, "suppressions.yaml")
	if err := os.WriteFile(sup, []byte("suppressions:\n  - class: credential-value\n    server: loop\n    tool: login\n    reason: a read-only key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(t.TempDir(), "lock.json")
	t.Chdir(repo) // relative paths, as `scan --repo .` in a checkout gives
	scan := func(format bool) []byte {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &errb}
		o := scanConfigOptions{Repo: ".", SARIF: format, JSON: !format, Lock: lock, Suppressions: "suppressions.yaml",
			Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Probe: probe.Options{Timeout: 20 * time.Second}}
		if err := runScanConfig(context.Background(), env, o); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		return out.Bytes()
	}
	scan(false) // pins the tools
	s.RemoveTools("login")
	addTool(s, "login", "log in with a key", `{"type":"object","properties":{"api_key":{"type":"string"}}}`)

	first := scan(true)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, first)
	}
	githubSARIFRules(t, first)
	var log sarifOut
	if err := json.Unmarshal(first, &log); err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, run := range log.Runs {
		for _, inv := range run.Invocations {
			for _, n := range inv.ToolExecutionNotifications {
				notes++
				if !strings.Contains(n.Message.Text, `"docs" was not scanned`) || !strings.Contains(run.AutomationDetails.ID, ".vscode/mcp.json") {
					t.Errorf("notification %q in the run of %s", n.Message.Text, run.AutomationDetails.ID)
				}
			}
		}
	}
	if notes != 1 {
		t.Errorf("%d notifications, want one for the server not scanned", notes)
	}
	if len(log.Runs) != 2 || log.Runs[0].AutomationDetails.ID == log.Runs[1].AutomationDetails.ID {
		t.Fatalf("runs %+v: want one per config file, each its own automationDetails.id", log.Runs)
	}
	byRule := map[string][]string{}
	prints := map[string]string{}
	for _, run := range log.Runs {
		id := run.AutomationDetails.ID
		if !strings.HasSuffix(id, "/") {
			t.Errorf("automationDetails.id %q: without a final slash code scanning takes its last part for a run id", id)
		}
		for _, r := range run.Results {
			rules := run.Tool.Driver.Rules
			if r.RuleIndex >= len(rules) || rules[r.RuleIndex].ID != r.RuleID || r.Message.Text == "" || len(r.Locations) != 1 {
				t.Errorf("result %+v: rule index, message or location wrong", r)
				continue
			}
			loc := r.Locations[0].PhysicalLocation
			where := fmt.Sprintf("%s:%d", loc.ArtifactLocation.URI, loc.Region.StartLine)
			if !strings.Contains(id, loc.ArtifactLocation.URI) {
				t.Errorf("result at %s in the run of %s", where, id)
			}
			byRule[r.RuleID] = append(byRule[r.RuleID], where)
			fp := r.PartialFingerprints[cfgFingerprintKey]
			if len(fp) != 64 {
				t.Errorf("fingerprint %q", fp)
			}
			prints[r.RuleID+" "+r.Message.Text] = fp
			if r.RuleID == "gg:credential-value" && (len(r.Suppressions) != 1 || r.Suppressions[0].Justification != "a read-only key" || r.Suppressions[0].Kind != "external") {
				t.Errorf("the suppressed finding: %+v", r.Suppressions)
			}
		}
	}
	want := map[string][]string{
		"gg:command-string":   {".cursor/mcp.json:3"},
		"gg:credential-value": {".cursor/mcp.json:3"},
		"tool-changed":        {".cursor/mcp.json:3"},
		"unpinned":            {".vscode/mcp.json:3"},
	}
	for rule, w := range want {
		if !slices.Equal(byRule[rule], w) {
			t.Errorf("%s at %v, want %v", rule, byRule[rule], w)
		}
	}

	// The server moves three lines down: the same fingerprints.
	cfg := filepath.Join(".cursor", "mcp.json")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append([]byte("\n\n\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	var moved sarifOut
	if err := json.Unmarshal(scan(true), &moved); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, run := range moved.Runs {
		for _, r := range run.Results {
			if fp, ok := prints[r.RuleID+" "+r.Message.Text]; !ok || fp != r.PartialFingerprints[cfgFingerprintKey] {
				t.Errorf("%s: fingerprint changed when the server moved", r.Message.Text)
			}
			if run.AutomationDetails.ID == log.Runs[0].AutomationDetails.ID && r.Locations[0].PhysicalLocation.Region.StartLine != 6 {
				t.Errorf("%s: line %d after the move, want 6", r.Message.Text, r.Locations[0].PhysicalLocation.Region.StartLine)
			}
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d results after the move, want 4", n)
	}

	// The validator catches what the schema forbids.
	var bad map[string]any
	if err := json.Unmarshal(first, &bad); err != nil {
		t.Fatal(err)
	}
	bad["runs"].([]any)[0].(map[string]any)["results"].([]any)[0].(map[string]any)["level"] = "fatal"
	b, _ = json.Marshal(bad)
	inst, _ = jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if schema.Validate(inst) == nil {
		t.Error("the schema accepts a result of level \"fatal\"")
	}
}

// githubSARIFRules holds a log to what GitHub code scanning documents for
// an upload ("SARIF support for code scanning"): at most 20 runs, each
// with a tool name, at most 25,000 rules and results, rules with at most
// 20 tags; every result with a rule id, a message text and 1 to 1,000
// locations, each a non-empty artifact URI and a start line; and no two
// runs of the tool in one category (automationDetails.id up to its last
// slash), which GitHub rejects.
func githubSARIFRules(t *testing.T, b []byte) {
	t.Helper()
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Name  string
					Rules []struct {
						ID         string
						Properties struct{ Tags []string }
					}
				}
			}
			AutomationDetails *struct{ ID string } `json:"automationDetails"`
			Results           []struct {
				RuleID    string `json:"ruleId"`
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) > 20 {
		t.Errorf("%d runs; GitHub takes at most 20 in one upload", len(log.Runs))
	}
	categories := map[string]bool{}
	for i, run := range log.Runs {
		d := run.Tool.Driver
		if d.Name == "" || len(d.Rules) > 25000 || len(run.Results) > 25000 {
			t.Errorf("run %d: driver %q, %d rules, %d results", i, d.Name, len(d.Rules), len(run.Results))
		}
		cat := ""
		if run.AutomationDetails != nil {
			cat = run.AutomationDetails.ID[:strings.LastIndex(run.AutomationDetails.ID, "/")+1]
		}
		if categories[d.Name+" "+cat] {
			t.Errorf("run %d: a second run of %s in category %q", i, d.Name, cat)
		}
		categories[d.Name+" "+cat] = true
		for _, r := range d.Rules {
			if r.ID == "" || len(r.Properties.Tags) > 20 {
				t.Errorf("rule %+v", r)
			}
		}
		for _, r := range run.Results {
			if r.RuleID == "" || r.Message.Text == "" || len(r.Locations) == 0 || len(r.Locations) > 1000 {
				t.Errorf("result %+v", r)
			}
			for _, l := range r.Locations {
				if l.PhysicalLocation.ArtifactLocation.URI == "" || l.PhysicalLocation.Region.StartLine < 1 {
					t.Errorf("location %+v", l)
				}
			}
		}
	}
}
