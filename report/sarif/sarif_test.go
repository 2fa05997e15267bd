package sarif

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

func strp(s string) *string { return &s }

// sarifSample is a few tools as the classify command would hand them over:
// several classes on one property, bucket-only properties, a property under
// $defs, a tool without a name or server, and awkward file names.
func sarifSample() (origins []label.Origin, tools []*label.ToolLabels) {
	add := func(o label.Origin, t *label.ToolLabels) { origins, tools = append(origins, o), append(tools, t) }
	add(label.Origin{File: "tools.jsonl", Line: 1}, &label.ToolLabels{
		ServerID: strp("srv-1"), Tool: strp("write_file"),
		Properties: []label.PropertyLabels{
			{Name: "path", Where: "properties", Required: true, Classes: []string{"gg:filesystem-path"}},
			{Name: "content", Where: "properties", Buckets: []string{"raw_content_blob"}},
			{Name: "webhook_url", Where: "properties", Classes: []string{"gg:credential-value", "gg:url-endpoint"}, Buckets: []string{"account_identity"}},
		},
	})
	add(label.Origin{File: "tools.jsonl", Line: 7}, &label.ToolLabels{
		Tool: strp(`say "hi"`),
		Properties: []label.PropertyLabels{
			{Name: "amount", Where: "$defs/Payment", Classes: []string{"gg:money-amount"}},
			{Name: "cmd", Where: "definitions/Run", Required: true, Classes: []string{"gg:command-string"}},
		},
	})
	add(label.Origin{File: "my dir/schema #1.json", Line: 3}, &label.ToolLabels{
		Properties: []label.PropertyLabels{{Name: "token", Where: "properties", Classes: []string{"gg:credential-value"}}},
	})
	add(label.Origin{File: "/abs/path/tools.jsonl", Line: 2}, &label.ToolLabels{
		Tool:       strp("nothing"),
		Properties: []label.PropertyLabels{{Name: "data", Where: "properties", Buckets: []string{"raw_content_blob"}}},
	})
	add(label.Origin{File: "stdin", Line: 4}, &label.ToolLabels{Tool: strp("no properties")})
	return origins, tools
}

func writeSARIF(t *testing.T) []byte {
	t.Helper()
	w := NewWriter()
	origins, tools := sarifSample()
	for i := range tools {
		w.Add(origins[i], tools[i])
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("WriteTo returned %d, wrote %d bytes", n, buf.Len())
	}
	return buf.Bytes()
}

// sarifDoc is the part of a SARIF log that viewers need, read back
// independently of the writer's own types.
type sarifDoc struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           string `json:"name"`
				Version        string `json:"version"`
				InformationURI string `json:"informationUri"`
				Rules          []struct {
					ID               string `json:"id"`
					Name             string `json:"name"`
					ShortDescription struct{ Text string }
					FullDescription  struct{ Text string }
					Help             struct{ Text, Markdown string }
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex *int   `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int64 `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					Name               string `json:"name"`
					FullyQualifiedName string `json:"fullyQualifiedName"`
					Kind               string `json:"kind"`
				} `json:"logicalLocations"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

// TestSARIFStructure checks what SARIF viewers rely on.
func TestSARIFStructure(t *testing.T) {
	var doc sarifDoc
	if err := json.Unmarshal(writeSARIF(t), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "2.1.0" || doc.Schema != "https://json.schemastore.org/sarif-2.1.0.json" {
		t.Errorf("version %q, $schema %q", doc.Version, doc.Schema)
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(doc.Runs))
	}
	run := doc.Runs[0]
	d := run.Tool.Driver
	// The version is the build's, from the one source the version
	// command prints, not a constant of the writer.
	if want := buildinfo.Read().Version; d.Name != "atlas-reproduce" || d.Version != want || want == "" || d.InformationURI == "" {
		t.Errorf("driver = %q %q %q, want version %q", d.Name, d.Version, d.InformationURI, want)
	}
	// One rule per normative class, in the classifier's order, with its
	// Python patterns in the full description.
	var wantIDs, gotIDs []string
	for _, r := range classify.Rules() {
		if r.Normative {
			wantIDs = append(wantIDs, r.ID)
		}
	}
	for i, r := range d.Rules {
		gotIDs = append(gotIDs, r.ID)
		cr, ok := classify.Lookup(r.ID)
		if !ok {
			t.Errorf("rule %d: unknown id %q", i, r.ID)
			continue
		}
		for _, p := range cr.Patterns {
			if !strings.Contains(r.FullDescription.Text, p) || !strings.Contains(r.Help.Markdown, p) {
				t.Errorf("rule %s: pattern %s missing from fullDescription or help", r.ID, p)
			}
		}
		if r.Name == "" || r.ShortDescription.Text == "" || r.Help.Text == "" {
			t.Errorf("rule %s: empty name, shortDescription or help", r.ID)
		}
	}
	if !slices.Equal(gotIDs, wantIDs) {
		t.Errorf("rule ids = %q, want %q", gotIDs, wantIDs)
	}

	// One result per (property, class); buckets give none.
	type key struct{ rule, fqn string }
	var got []key
	for i, r := range run.Results {
		if r.RuleIndex == nil || *r.RuleIndex < 0 || *r.RuleIndex >= len(d.Rules) || d.Rules[*r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %d: ruleId %q does not match ruleIndex %v", i, r.RuleID, r.RuleIndex)
		}
		if want := Level(r.RuleID); r.Level != want || want == "" {
			t.Errorf("result %d: level %q, want %q", i, r.Level, want)
		}
		if r.Message.Text == "" {
			t.Errorf("result %d: empty message", i)
		}
		if len(r.Locations) != 1 || len(r.Locations[0].LogicalLocations) != 1 {
			t.Fatalf("result %d: want one location with one logical location: %+v", i, r.Locations)
		}
		pl := r.Locations[0].PhysicalLocation
		if pl.Region.StartLine < 1 {
			t.Errorf("result %d: startLine %d", i, pl.Region.StartLine)
		}
		if u, err := url.Parse(pl.ArtifactLocation.URI); err != nil || pl.ArtifactLocation.URI == "" || strings.ContainsAny(pl.ArtifactLocation.URI, " \\") {
			t.Errorf("result %d: uri %q is not a URI reference (%v, %v)", i, pl.ArtifactLocation.URI, u, err)
		}
		ll := r.Locations[0].LogicalLocations[0]
		if ll.Kind != "parameter" || !strings.HasSuffix(ll.FullyQualifiedName, "/"+ll.Name) {
			t.Errorf("result %d: logical location %+v", i, ll)
		}
		got = append(got, key{r.RuleID, fmt.Sprintf("%s:%d:%s", pl.ArtifactLocation.URI, pl.Region.StartLine, ll.FullyQualifiedName)})
	}
	want := []key{
		{"gg:filesystem-path", "tools.jsonl:1:write_file/properties/path"},
		{"gg:credential-value", "tools.jsonl:1:write_file/properties/webhook_url"},
		{"gg:url-endpoint", "tools.jsonl:1:write_file/properties/webhook_url"},
		{"gg:money-amount", `tools.jsonl:7:say "hi"/$defs/Payment/amount`},
		{"gg:command-string", `tools.jsonl:7:say "hi"/definitions/Run/cmd`},
		{"gg:credential-value", "my%20dir/schema%20%231.json:3:(unnamed tool)/properties/token"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("results:\n got %q\nwant %q", got, want)
	}
	if len(run.Results) > 0 {
		msg := run.Results[0].Message.Text
		for _, s := range []string{`"path"`, `"write_file"`, "gg:filesystem-path", "required"} {
			if !strings.Contains(msg, s) {
				t.Errorf("message %q lacks %s", msg, s)
			}
		}
	}
}

// sarifShape is a small JSON-schema subset of SARIF 2.1.0 for the objects
// this writer emits: their required properties, the properties the schema
// allows (it sets additionalProperties false, which validators enforce), and
// the shape of nested objects and arrays.
type sarifShape struct {
	required []string
	allowed  []string
	children map[string]string // property -> shape name (arrays: "[]name")
}

var sarifShapes = map[string]sarifShape{
	"log": {required: []string{"version", "runs"}, allowed: []string{"$schema", "version", "runs", "inlineExternalProperties", "properties"},
		children: map[string]string{"runs": "[]run"}},
	"run": {required: []string{"tool"}, allowed: []string{"tool", "invocations", "conversion", "language", "versionControlProvenance",
		"originalUriBaseIds", "artifacts", "logicalLocations", "graphs", "results", "automationDetails", "runAggregates", "baselineGuid",
		"redactionTokens", "defaultEncoding", "defaultSourceLanguage", "newlineSequences", "columnKind", "externalPropertyFileReferences",
		"threadFlowLocations", "taxonomies", "addresses", "translations", "policies", "webRequests", "webResponses", "specialLocations", "properties"},
		children: map[string]string{"tool": "tool", "results": "[]result"}},
	"tool": {required: []string{"driver"}, allowed: []string{"driver", "extensions", "properties"}, children: map[string]string{"driver": "toolComponent"}},
	"toolComponent": {required: []string{"name"}, allowed: []string{"guid", "name", "organization", "product", "productSuite", "shortDescription",
		"fullDescription", "fullName", "version", "semanticVersion", "dottedQuadFileVersion", "releaseDateUtc", "downloadUri", "informationUri",
		"globalMessageStrings", "notifications", "rules", "taxa", "locations", "language", "contents", "isComprehensive",
		"localizedDataSemanticVersion", "minimumRequiredLocalizedDataSemanticVersion", "associatedComponent", "translationMetadata",
		"supportedTaxonomies", "properties"},
		children: map[string]string{"rules": "[]reportingDescriptor"}},
	"reportingDescriptor": {required: []string{"id"}, allowed: []string{"id", "deprecatedIds", "guid", "deprecatedGuids", "name", "deprecatedNames",
		"shortDescription", "fullDescription", "messageStrings", "defaultConfiguration", "helpUri", "help", "relationships", "properties"},
		children: map[string]string{"shortDescription": "multiformatMessageString", "fullDescription": "multiformatMessageString",
			"help": "multiformatMessageString", "defaultConfiguration": "reportingConfiguration", "properties": "propertyBag"}},
	"multiformatMessageString": {required: []string{"text"}, allowed: []string{"text", "markdown", "properties"}},
	"reportingConfiguration":   {allowed: []string{"enabled", "level", "rank", "parameters", "properties"}},
	"result": {required: []string{"message"}, allowed: []string{"ruleId", "ruleIndex", "rule", "kind", "level", "message", "analysisTarget",
		"locations", "guid", "correlationGuid", "occurrenceCount", "partialFingerprints", "fingerprints", "stacks", "codeFlows", "graphs",
		"graphTraversals", "relatedLocations", "suppressions", "baselineState", "rank", "attachments", "hostedViewerUri", "workItemUris",
		"provenance", "fixes", "taxa", "webRequest", "webResponse", "properties"},
		children: map[string]string{"message": "message", "locations": "[]location", "properties": "propertyBag"}},
	"message":          {required: []string{"text"}, allowed: []string{"text", "markdown", "id", "arguments", "properties"}},
	"location":         {allowed: []string{"id", "physicalLocation", "logicalLocations", "message", "annotations", "relationships", "properties"}, children: map[string]string{"physicalLocation": "physicalLocation", "logicalLocations": "[]logicalLocation"}},
	"physicalLocation": {required: []string{"artifactLocation"}, allowed: []string{"address", "artifactLocation", "region", "contextRegion", "properties"}, children: map[string]string{"artifactLocation": "artifactLocation", "region": "region"}},
	"artifactLocation": {allowed: []string{"uri", "uriBaseId", "index", "description", "properties"}},
	"region": {allowed: []string{"startLine", "startColumn", "endLine", "endColumn", "charOffset", "charLength", "byteOffset", "byteLength",
		"snippet", "message", "sourceLanguage", "properties"}},
	"logicalLocation": {allowed: []string{"name", "index", "fullyQualifiedName", "decoratedName", "parentIndex", "kind", "properties"}},
	// A property bag takes any keys; "tags" must be an array of strings.
	"propertyBag": {},
}

// checkShape reports through errorf every way v, at path, breaks shape.
func checkShape(errorf func(format string, args ...any), path, shape string, v any) {
	if elem, ok := strings.CutPrefix(shape, "[]"); ok {
		arr, ok := v.([]any)
		if !ok {
			errorf("%s: want an array, got %T", path, v)
			return
		}
		for i, e := range arr {
			checkShape(errorf, fmt.Sprintf("%s[%d]", path, i), elem, e)
		}
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		errorf("%s: want an object (%s), got %T", path, shape, v)
		return
	}
	s := sarifShapes[shape]
	for _, k := range s.required {
		if _, ok := obj[k]; !ok {
			errorf("%s: %s lacks required %q", path, shape, k)
		}
	}
	if shape == "propertyBag" {
		if tags, ok := obj["tags"]; ok {
			if arr, ok := tags.([]any); !ok || slices.ContainsFunc(arr, func(e any) bool { _, s := e.(string); return !s }) {
				errorf("%s.tags: want an array of strings", path)
			}
		}
		return
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.Contains(s.allowed, k) {
			errorf("%s: %s does not allow %q", path, shape, k)
		}
		if child, ok := s.children[k]; ok {
			checkShape(errorf, path+"."+k, child, obj[k])
		}
	}
}

// TestSARIFSchema checks the output against the SARIF 2.1.0 schema's
// requirements for the objects it contains, plus the value constraints
// viewers reject files for.
func TestSARIFSchema(t *testing.T) {
	var v map[string]any
	if err := json.Unmarshal(writeSARIF(t), &v); err != nil {
		t.Fatal(err)
	}
	checkShape(t.Errorf, "$", "log", v)
	if v["version"] != "2.1.0" {
		t.Errorf("version = %v", v["version"])
	}
	run := v["runs"].([]any)[0].(map[string]any)
	for i, r := range run["results"].([]any) {
		res := r.(map[string]any)
		if lvl := res["level"]; !slices.Contains([]any{"none", "note", "warning", "error"}, lvl) {
			t.Errorf("results[%d].level = %v", i, lvl)
		}
		if idx, ok := res["ruleIndex"].(float64); !ok || idx < 0 || idx != float64(int(idx)) {
			t.Errorf("results[%d].ruleIndex = %v", i, res["ruleIndex"])
		}
		region := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["region"].(map[string]any)
		if l, ok := region["startLine"].(float64); !ok || l < 1 {
			t.Errorf("results[%d] startLine = %v", i, region["startLine"])
		}
	}
	// The checker must be able to fail: a result without a message and
	// with a property SARIF does not define is caught.
	var complaints []string
	probe := func(format string, args ...any) { complaints = append(complaints, fmt.Sprintf(format, args...)) }
	checkShape(probe, "$", "result", map[string]any{"ruleId": "x", "severity": "high"})
	if len(complaints) != 2 {
		t.Errorf("checkShape on a result without a message and with an unknown property: %q, want two complaints", complaints)
	}
}

// TestSARIFEmpty checks that a run without findings still says it ran:
// "results": [] rather than null, which viewers read as "not run".
func TestSARIFEmpty(t *testing.T) {
	var buf bytes.Buffer
	if _, err := NewWriter().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"results": []`) {
		t.Errorf("empty log lacks \"results\": []:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), `\u003c`) {
		t.Errorf("patterns are HTML-escaped in the log")
	}
}

func TestArtifactURI(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		isURL    bool
	}{
		{"tools.jsonl", "tools.jsonl", false},
		{"dir/sub dir/a#b.json", "dir/sub%20dir/a%23b.json", false},
		{"c:x.json", "./c:x.json", false},
		{"/tmp/t.jsonl", "file:///tmp/t.jsonl", false},
		{"", "stdin", false},
		{"stdin", "stdin", false},
		// scan names the server by its URL: kept as the URI it is.
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp", true},
		{"https://mcp.example.com/v1/sse?x=1", "https://mcp.example.com/v1/sse?x=1", true},
		{"http:relative", "./http:relative", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got, isURL := artifactURI(tc.in); got != tc.want || isURL != tc.isURL {
				t.Errorf("artifactURI(%q) = %q %v, want %q %v", tc.in, got, isURL, tc.want, tc.isURL)
			}
		})
	}
}

// TestLevels: each class has the level the README documents, and its
// rule's default configuration and security-severity agree.
func TestLevels(t *testing.T) {
	want := map[string]string{
		"gg:command-string": "warning", "gg:credential-value": "warning", "gg:filesystem-path": "warning",
		"gg:url-endpoint": "note", "gg:money-amount": "note",
	}
	var doc struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID                   string
						DefaultConfiguration struct{ Level string }
						Properties           map[string]any
					}
				}
			}
		}
	}
	var buf bytes.Buffer
	NewWriter().WriteTo(&buf)
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Runs[0].Tool.Driver.Rules {
		if r.DefaultConfiguration.Level != want[r.ID] || Level(r.ID) != want[r.ID] {
			t.Errorf("%s: level %q (Level %q), want %q", r.ID, r.DefaultConfiguration.Level, Level(r.ID), want[r.ID])
		}
		if sev, _ := r.Properties["security-severity"].(string); sev == "" {
			t.Errorf("%s: no security-severity", r.ID)
		}
	}
}

// TestFingerprintsAndLines: through the labeller, each result carries a
// partial fingerprint from the tool's definition hash, the same wherever
// the tool stands and another when its definition changes, and the line
// of the tool in a document that spans lines.
func TestFingerprintsAndLines(t *testing.T) {
	doc := "{\"tools\": [\n  {\"name\": \"a\",\n   \"inputSchema\": {\"properties\": {\"api_key\": {}}}},\n\n  {\"name\": \"b\", \"inputSchema\": {\"properties\": {\"cmd\": {}}}}\n]}\n"
	moved := "{\"tools\": [{\"name\": \"b\", \"inputSchema\": {\"properties\": {\"cmd\": {}}}}, {\"inputSchema\": {\"properties\": {\"api_key\": {}}}, \"name\": \"a\"}]}"
	changed := "{\"tools\": [{\"name\": \"a\", \"description\": \"new\", \"inputSchema\": {\"properties\": {\"api_key\": {}}}}]}"
	type res struct {
		rule, fp string
		line     int64
	}
	results := func(doc string) map[string]res {
		w := NewWriter()
		l := label.NewLabeller().WithDefinitionHash(func(t *census.Tool) [32]byte { var h toolid.Hasher; return h.Tool(t).Definition })
		if err := l.ClassifyDocument([]byte(doc), "tools.json", func(o label.Origin, tl *label.ToolLabels) error { w.Add(o, tl); return nil }); err != nil {
			t.Fatal(err)
		}
		out := map[string]res{}
		for _, r := range w.log.Runs[0].Results {
			out[*r.Properties.Tool] = res{r.RuleID, r.PartialFingerprints[fingerprintKey], r.Locations[0].PhysicalLocation.Region.StartLine}
		}
		return out
	}
	a, m, c := results(doc), results(moved), results(changed)
	if a["a"].line != 2 || a["b"].line != 5 {
		t.Errorf("lines a=%d b=%d, want 2 and 5", a["a"].line, a["b"].line)
	}
	for _, tool := range []string{"a", "b"} {
		if len(a[tool].fp) != 64 || a[tool].fp != m[tool].fp {
			t.Errorf("tool %s: fingerprint %q, moved and reordered %q: want one 64-digit value", tool, a[tool].fp, m[tool].fp)
		}
	}
	if a["a"].fp == a["b"].fp || c["a"].fp == a["a"].fp {
		t.Error("fingerprints of different tools, or of a changed definition, are equal")
	}
	// A server's URL has no lines: no region.
	w := NewWriter()
	w.Add(label.Origin{File: "https://mcp.example.com/mcp", Line: 1}, &label.ToolLabels{Tool: strp("t"),
		Properties: []label.PropertyLabels{{Name: "url", Where: "properties", Classes: []string{"gg:url-endpoint"}}}})
	pl := w.log.Runs[0].Results[0].Locations[0].PhysicalLocation
	if pl.ArtifactLocation.URI != "https://mcp.example.com/mcp" || pl.Region != nil {
		t.Errorf("scan location %+v", pl)
	}
}
