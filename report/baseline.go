package report

import "html/template"

func init() {
	htmlTemplate.Funcs(template.FuncMap{"classOrder": ClassOrder, "strOrNull": strOrNull, "idList": idList, "changeLists": changeLists})
	template.Must(htmlTemplate.New("baseline").Parse(baselineHTML))
}

// baselineHTML is the page's section setting a release beside its
// baseline run (run --baseline): the class totals, then tool by tool.
const baselineHTML = `{{with .R.Baseline}}{{$d := .Diff}}<section id="baseline">
<h2>Beside the baseline run</h2>
<p class="note">The previous run <code>{{.Dir}}</code> (old) beside this one (new), class by class and tool by tool, as <code>diff</code> compares them. Percentages are of each run's own live tools; Δ pp is the change in percentage points.</p>
<table id="baseline-classes">
<thead><tr><th>Class</th><th>Old tools</th><th>Old %</th><th>New tools</th><th>New %</th><th>Δ tools</th><th>Δ pp</th><th>Old ≥1 required</th><th>New ≥1 required</th><th>Δ required</th></tr></thead>
<tbody>
{{range $d.Classes}}<tr><td><code class="id">{{.ID}}</code></td><td class="n">{{num .Tools.Old}}</td><td class="n">{{pct .Tools.OldPercent}}</td><td class="n">{{num .Tools.New}}</td><td class="n">{{pct .Tools.NewPercent}}</td><td class="n">{{signed .Tools.Change.Change}}</td><td class="n">{{printf "%+.3f" .Tools.ChangePoints}}</td><td class="n">{{num .Required.Old}}</td><td class="n">{{num .Required.New}}</td><td class="n">{{signed .Required.Change}}</td></tr>
{{end}}</tbody>
</table>
{{with $d.Tools.ToolCounts}}<table id="baseline-tools">
<tbody>
<tr><td>Tools added</td><td class="n">{{num .Added}}</td></tr>
<tr><td>Tools removed</td><td class="n">{{num .Removed}}</td></tr>
<tr><td>Tools changed (another <code>definition_sha256</code>)</td><td class="n">{{num .Changed}}</td></tr>
<tr><td>Tools unchanged</td><td class="n">{{num .Unchanged}}</td></tr>
{{with $d.Servers.ServerCounts}}<tr><td>Servers added</td><td class="n">{{num .Added}}</td></tr>
<tr><td>Servers removed</td><td class="n">{{num .Removed}}</td></tr>
{{end}}</tbody>
</table>
<table id="baseline-gained">
<thead><tr><th>Class</th><th>Tools gaining it</th><th>Tools losing it</th><th>Required gained</th><th>Required lost</th></tr></thead>
<tbody>
{{range classOrder}}<tr><td><code class="id">{{.}}</code></td><td class="n">{{num (index $d.ClassesGained .)}}</td><td class="n">{{num (index $d.ClassesLost .)}}</td><td class="n">{{num (index $d.RequiredGained .)}}</td><td class="n">{{num (index $d.RequiredLost .)}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{with $d.ToolChanges}}{{range $list := (changeLists .)}}{{if $list.Rows}}<h3>{{$list.Title}} (first {{len $list.Rows}})</h3>
<table class="baseline-list">
<thead><tr><th>Server</th><th>Tool</th><th>#</th><th>Classes before</th><th>Classes after</th><th>Gained</th><th>Lost</th></tr></thead>
<tbody>
{{range $list.Rows}}<tr><td><code>{{strOrNull .ServerID}}</code></td><td><code>{{strOrNull .Tool}}</code></td><td class="n">{{.NameOrdinal}}</td><td>{{idList .OldClasses (eq .Change.String "added")}}</td><td>{{idList .NewClasses (eq .Change.String "removed")}}</td><td>{{idList .ClassesGained false}}</td><td>{{idList .ClassesLost false}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{end}}{{end}}</section>
{{end}}`

// changeList is one list of a tool-level diff, for the page.
type changeList struct {
	Title string
	Rows  []ToolChange
}

func changeLists(f *ToolChanges) []changeList {
	return []changeList{{"Tools added", f.Added}, {"Tools removed", f.Removed}, {"Tools changed", f.Changed}}
}
