package sensitivity_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// runPython runs testdata/sensitivity.py (the definitions in CPython, on
// top of bench/reference.py) on JSON lines.
func runPython(t *testing.T, input []byte) []byte {
	t.Helper()
	cmd := exec.Command(testenv.Python3(t), filepath.Join("testdata", "sensitivity.py"), testenv.ReferencePy())
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sensitivity.py: %v\n%s", err, stderr.String())
	}
	return out
}

// runGo is classify --sensitivity on the same lines.
func runGo(t *testing.T, input []byte) []byte {
	t.Helper()
	var out []byte
	l := label.NewLabeller().WithSensitivity()
	err := l.ClassifyStream(bytes.NewReader(input), "input", func(_ label.Origin, tl *label.ToolLabels) error {
		out = tl.AppendJSON(out)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compare requires the Go and CPython outputs identical tool by tool, and
// returns the number of tools.
func compare(t *testing.T, input []byte) int {
	t.Helper()
	want := strings.Split(string(runPython(t, input)), "\n")
	got := strings.Split(string(runGo(t, input)), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d tools from Go, %d from CPython", len(got)-1, len(want)-1)
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			bad++
			if bad <= 5 {
				t.Errorf("tool %d:\n go: %s\n py: %s", i, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d tools differ", bad, len(want)-1)
	}
	return len(want) - 1
}

func TestFixedSchemasMatchCPython(t *testing.T) {
	input := bytes.Join(fixedLines(), []byte("\n"))
	n := compare(t, input)
	if n < 100 {
		t.Fatalf("only %d tools", n)
	}
}

func TestSyntheticSchemasMatchCPython(t *testing.T) {
	g := newSchemaGen(14)
	var input bytes.Buffer
	for i := range 3000 {
		input.Write(g.line(i))
		input.WriteByte('\n')
	}
	compare(t, input.Bytes())
}

func TestRealSchemasMatchCPython(t *testing.T) {
	compare(t, realcorpus.MustRead(t))
}

// TestVariantsAddSomething guards the differential tests against a
// vacuous pass: on the fixed cases every variant adds classes, required
// ones included, and the depth limit cuts where it should.
func TestVariantsAddSomething(t *testing.T) {
	out := string(runGo(t, bytes.Join(fixedLines(), []byte("\n"))))
	for _, want := range []string{
		`"camel_case": {"classes": ["gg:credential-value"], "required_classes": ["gg:credential-value"]}`,
		`"word_split": {"classes": ["gg:filesystem-path", "gg:money-amount"], "required_classes": ["gg:money-amount"]}`,
		`"deep": {"classes": ["gg:url-endpoint"]}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no tool with %s", want)
		}
	}
	lines := strings.Split(out, "\n")
	// chain(kw, d) for d = 62..67: the hidden properties sit in a node of
	// depth d and count up to 64.
	for i, d := range []int{62, 63, 64, 65, 66, 67} {
		found := strings.Contains(lines[i], `"deep": {"classes": ["gg:credential-value"]}`)
		if found != (d <= sensitivity.MaxDepth) {
			t.Errorf("properties at depth %d: deep found them %v: %s", d, found, lines[i])
		}
	}
}

func TestRewriteExamples(t *testing.T) {
	for _, c := range []struct{ name, camel, words string }{
		{"privateKey", "private_Key", "private Key"},
		{"webhookURL", "webhook_URL", "webhook URL"},
		{"HTTPServer", "HTTP_Server", "HTTP Server"},
		{"access_token", "access_token", "access token"},
		{"outputPath", "output_Path", "output Path"},
		{"a1B", "a1_B", "a1 B"},
		{"ABc", "A_Bc", "A Bc"},
		{"AB", "AB", "AB"},
		{"XMLHttpRequest", "XML_Http_Request", "XML Http Request"},
		{"api.key-name", "api.key-name", "api key name"},
		{"naïvePath", "naïve_Path", "naïve Path"},
		{"", "", ""},
	} {
		if got := string(sensitivity.CamelCase(nil, []byte(c.name))); got != c.camel {
			t.Errorf("CamelCase(%q) = %q, want %q", c.name, got, c.camel)
		}
		if got := string(sensitivity.WordSplit(nil, []byte(c.name))); got != c.words {
			t.Errorf("WordSplit(%q) = %q, want %q", c.name, got, c.words)
		}
	}
	if got := string(sensitivity.CamelCase(nil, []byte("naïPath"))); got != "naïPath" {
		t.Errorf("CamelCase(naïPath) = %q: ï is not in [a-z0-9], so no boundary", got)
	}
}

// TestWorkedExample recomputes the figures report.SensitivityWorkedExample
// and docs/sensitivity.md quote from the bundled real schemas.
func TestWorkedExample(t *testing.T) {
	type row struct{ norm, camel, camelReq, words, wordsReq, deep int }
	rows := map[string]*row{}
	l := label.NewLabeller().WithSensitivity()
	err := l.ClassifyStream(bytes.NewReader(realcorpus.MustRead(t)), "real", func(_ label.Origin, tl *label.ToolLabels) error {
		get := func(id string) *row {
			if rows[id] == nil {
				rows[id] = &row{}
			}
			return rows[id]
		}
		for _, id := range tl.Classes {
			get(id).norm++
		}
		s := tl.Sensitivity
		for _, id := range s.CamelCase.Classes {
			get(id).camel++
		}
		for _, id := range s.CamelCase.RequiredClasses {
			get(id).camelReq++
		}
		for _, id := range s.WordSplit.Classes {
			get(id).words++
		}
		for _, id := range s.WordSplit.RequiredClasses {
			get(id).wordsReq++
		}
		for _, id := range s.Deep.Classes {
			get(id).deep++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fs, cred, url := rows["gg:filesystem-path"], rows["gg:credential-value"], rows["gg:url-endpoint"]
	got := fmt.Sprintf("word_split adds the most to gg:filesystem-path (+%d tools to %d, +%.2f%%; %d through a required property), then gg:credential-value (+%d to %d); camel_case adds only gg:credential-value (+%d: all from privateKey, which becomes private_Key); deep adds %d tools to gg:url-endpoint (+%.2f%%)",
		fs.words, fs.norm, 100*float64(fs.words)/float64(fs.norm), fs.wordsReq, cred.words, cred.norm, cred.camel, url.deep, 100*float64(url.deep)/float64(url.norm))
	if !strings.Contains(report.SensitivityWorkedExample, got) {
		t.Errorf("the worked example says\n%s\nthe real schemas give\n%s", report.SensitivityWorkedExample, got)
	}
	for id, r := range rows {
		if id != "gg:filesystem-path" && r.words >= fs.words {
			t.Errorf("word_split adds %d to %s, not less than to gg:filesystem-path", r.words, id)
		}
		if id != "gg:credential-value" && r.camel != 0 {
			t.Errorf("camel_case adds %d to %s", r.camel, id)
		}
		if id != "gg:url-endpoint" && (r.deep < 13 || r.deep > 28) {
			t.Errorf("deep adds %d to %s, outside 13 to 28", r.deep, id)
		}
	}
	readme, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "sensitivity.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range report.ClassOrder() {
		r := rows[id]
		pct := func(n int) string { return fmt.Sprintf("+%d (+%.2f%%)", n, 100*float64(n)/float64(r.norm)) }
		line := fmt.Sprintf("| `%s` | %d | %s | +%d | %s | +%d | %s |", id, r.norm, pct(r.camel), r.camelReq, pct(r.words), r.wordsReq, pct(r.deep))
		if !bytes.Contains(readme, []byte(line)) {
			t.Errorf("docs/sensitivity.md lacks the worked-example row\n%s", line)
		}
	}
}
