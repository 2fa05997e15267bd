package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// baselineReport is a release set beside a baseline run with one tool in
// each list of changes: added (with a class), removed (with a class), and
// changed (gaining one class, losing another).
func baselineReport(t *testing.T) *Report {
	t.Helper()
	old, new := sampleReport(true), sampleReport(false)
	new.Kind = KindRelease
	d := Diff(old, new)
	td := NewToolDiff()
	str := func(s string) *string { return &s }
	bit := func(id string) classify.Set {
		r, ok := classify.Lookup(id)
		if !ok {
			t.Fatalf("no class %s", id)
		}
		return r.Bit
	}
	cred, cmd, url := bit("gg:credential-value"), bit("gg:command-string"), bit("gg:url-endpoint")
	rows := []ToolChange{
		{Change: Added, ServerID: str("srv-new"), Tool: str("add_tool"), New: cred, NewReq: cred},
		{Change: Removed, ServerID: str("srv-old"), Tool: str("gone_tool"), Old: url},
		{Change: Changed, ServerID: str("srv-both"), Tool: str("moved_tool"), NameOrdinal: 1, Old: url, New: cmd},
	}
	for i := range rows {
		rows[i].SetLabels()
		td.Count(rows[i].Old, rows[i].New, rows[i].OldReq, rows[i].NewReq)
	}
	td.First.Added, td.First.Removed, td.First.Changed = rows[:1], rows[1:2], rows[2:]
	td.Tools = ToolCounts{Added: 1, Removed: 1, Changed: 1, Unchanged: 7}
	td.Servers = ServerCounts{Added: 1, Removed: 1}
	td.First.ServersAdded, td.First.ServersRemoved = []string{"srv-new"}, []string{"srv-old"}
	d.AddTools(td)
	new.Baseline = &Baseline{Dir: "runs/previous", Diff: d}
	return new
}

// TestBaselineRendersChanges writes report.json, report.md and report.html
// of a release whose baseline comparison has a tool in every list: each
// output shows each tool, on the side it has, with the classes it gained
// and lost.
func TestBaselineRendersChanges(t *testing.T) {
	r := baselineReport(t)
	var js, md, page bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&page); err != nil {
		t.Fatalf("report.html: %v", err)
	}
	back, err := ReadJSON(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	f := back.Baseline.Diff.ToolChanges
	if len(f.Added) != 1 || f.Added[0].Change != Added || len(f.Removed) != 1 || f.Removed[0].Change != Removed || len(f.Changed) != 1 || f.Changed[0].Change != Changed {
		t.Errorf("report.json's changes read back as %+v", f)
	}
	if g := back.Baseline.Diff.ClassesGained; g["gg:credential-value"] != 1 || g["gg:command-string"] != 1 || back.Baseline.Diff.ClassesLost["gg:url-endpoint"] != 2 {
		t.Errorf("report.json: gained %v, lost %v", g, back.Baseline.Diff.ClassesLost)
	}
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"report.md", md.String(), []string{
			"| Tools added | 1 |", "| Tools removed | 1 |", "| Tools changed | 1 |", "| Tools unchanged | 7 |",
			"| `srv-new` | `add_tool` | 0 | – | gg:credential-value | gg:credential-value | none |",
			"| `srv-old` | `gone_tool` | 0 | gg:url-endpoint | – | none | gg:url-endpoint |",
			"| `srv-both` | `moved_tool` | 1 | gg:url-endpoint | gg:command-string | gg:command-string | gg:url-endpoint |",
			"| `gg:url-endpoint` | 0 | 2 | 0 | 0 |",
		}},
		{"report.html", page.String(), []string{
			"<h3>Tools added (first 1)</h3>", "<h3>Tools removed (first 1)</h3>", "<h3>Tools changed (first 1)</h3>",
			`<tr><td><code>srv-new</code></td><td><code>add_tool</code></td><td class="n">0</td><td>–</td><td>gg:credential-value</td><td>gg:credential-value</td><td>none</td></tr>`,
			`<tr><td><code>srv-old</code></td><td><code>gone_tool</code></td><td class="n">0</td><td>gg:url-endpoint</td><td>–</td><td>none</td><td>gg:url-endpoint</td></tr>`,
			`<tr><td><code>srv-both</code></td><td><code>moved_tool</code></td><td class="n">1</td><td>gg:url-endpoint</td><td>gg:command-string</td><td>gg:command-string</td><td>gg:url-endpoint</td></tr>`,
			`<tr><td>Tools unchanged</td><td class="n">7</td></tr>`,
		}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.text, w) {
				t.Errorf("%s lacks %q", tc.name, w)
			}
		}
	}
	// The diff of the same two reports renders the same rows.
	var dmd bytes.Buffer
	if err := r.Baseline.Diff.WriteMarkdown(&dmd); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dmd.String(), "| `srv-both` | `moved_tool` | 1 | gg:url-endpoint | gg:command-string | gg:command-string | gg:url-endpoint |") {
		t.Error("diff's Markdown lacks the changed tool")
	}
}
