package sensitivity_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/runner"
	"github.com/atlas-reproduce/atlas-reproduce/sensitivity"
)

func python3(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("the CPython oracle needs python3 on PATH: %v", err)
	}
	return p
}

// runPython runs testdata/sensitivity.py (the definitions in CPython, on
// top of bench/reference.py) on JSON lines.
func runPython(t *testing.T, input []byte) []byte {
	t.Helper()
	cmd := exec.Command(python3(t), filepath.Join("testdata", "sensitivity.py"), filepath.Join("..", "bench", "reference.py"))
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
	l := runner.NewLabeller().WithSensitivity()
	err := l.ClassifyStream(bytes.NewReader(input), "input", func(_ report.Origin, tl *report.ToolLabels) error {
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
