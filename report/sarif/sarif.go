// Package sarif writes the labels as SARIF 2.1.0, for code-scanning viewers
// and GitHub code scanning.
package sarif

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// SARIF constants, the same in every log the project writes. SchemaURI is
// the one SARIF viewers and GitHub code scanning recognise for 2.1.0.
const (
	SchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"
	Version   = "2.1.0"
	// InformationURI is where the driver points readers for the tool.
	InformationURI = "https://github.com/atlas-reproduce/atlas-reproduce"
)

// classText describes a class for SARIF viewers: a PascalCase rule name, a
// one-line summary and the spec's definition, with the level its results
// carry and the security-severity GitHub code scanning ranks them by.
//
// The levels say what a team reviewing a server's tools can act on. A
// "warning" class puts an agent's input where it can run code, reveal a
// secret or reach the filesystem: the tool deserves a look before it is
// allowed (command-string, credential-value, filesystem-path). A "note"
// class is common and rarely dangerous alone, a fact for the reviewer
// (url-endpoint, money-amount). None is an "error": a label is a lexical
// signal, which the spec says must not be the sole authorization
// decision, so by default it fails no check; a CI that wants it to can set
// its own threshold (GitHub: the security severity, Critical to Low).
type classText struct {
	name, short, definition string
	level, severity         string
}

var classTexts = map[string]classText{
	"gg:credential-value": {"CredentialValue", "Parameter carries a credential or secret",
		"A parameter intended to carry an authentication secret or credential material, such as a token, API key, password, private key, or bearer/authorization value.",
		"warning", "7.0"},
	"gg:filesystem-path": {"FilesystemPath", "Parameter names a filesystem location",
		"A parameter that names a filesystem location: a file path, file name, directory, folder, or an explicit target/destination path.",
		"warning", "5.0"},
	"gg:command-string": {"CommandString", "Parameter carries an executable string",
		"A parameter intended to carry an executable string or fragment: a shell/system command, script, code, expression, SQL statement, arguments vector, or a free-form instruction interpreted by an execution engine.",
		"warning", "8.0"},
	"gg:money-amount": {"MoneyAmount", "Parameter carries a monetary amount or currency",
		"A parameter that carries a monetary quantity or currency designation: an amount, price, total, sum, currency, or a domain-specific refund/charge/unit amount expressed in cents.",
		"note", "3.0"},
	"gg:url-endpoint": {"UrlEndpoint", "Parameter addresses an external network destination",
		"A parameter that addresses an external network destination: a URL/URI, endpoint, host/hostname/domain, link, webhook, or an explicit base/target/callback URL.",
		"note", "4.0"},
}

// Level returns the SARIF level of a class's results ("" for an id that is
// no class).
func Level(id string) string { return classTexts[id].level }

// ClassRule is how a class is named as a rule: its PascalCase name, its
// one-line summary and the security severity code scanning ranks its
// results by; ok is false for an id that is no class.
func ClassRule(id string) (name, short, severity string, ok bool) {
	t, ok := classTexts[id]
	return t.name, t.short, t.severity, ok
}

// Log is a SARIF 2.1.0 log whose runs are R: each log models its own
// runs and results.
type Log[R any] struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []R    `json:"runs"`
}

// The SARIF 2.1.0 objects both logs of the project write (the classify
// command's, and scan's config findings in cmd) share: the driver with its
// rules, texts, and artifact and logical locations. Only the properties
// the two fill are modelled.
type (
	// Tool is a run's tool.
	Tool struct {
		Driver Driver `json:"driver"`
	}
	// Driver is the tool's driver, with the rules its results name.
	Driver struct {
		Name           string `json:"name"`
		InformationURI string `json:"informationUri"`
		Version        string `json:"version"`
		Rules          []Rule `json:"rules"`
	}
	// Rule is a reportingDescriptor: one rule results refer to by id and index.
	Rule struct {
		ID                   string         `json:"id"`
		Name                 string         `json:"name"`
		ShortDescription     Text           `json:"shortDescription"`
		FullDescription      Text           `json:"fullDescription"`
		Help                 Help           `json:"help"`
		DefaultConfiguration Configuration  `json:"defaultConfiguration"`
		Properties           RuleProperties `json:"properties"`
	}
	// Text is a message or description in plain text.
	Text struct {
		Text string `json:"text"`
	}
	// Help is a rule's help, in plain text and in Markdown.
	Help struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown"`
	}
	// Configuration is a rule's default configuration: its results' level.
	Configuration struct {
		Level string `json:"level"`
	}
	// RuleProperties are a rule's property bag.
	RuleProperties struct {
		Tags []string `json:"tags"`
		// Patterns are a class's regular expressions (none for a rule
		// that is no class).
		Patterns []string `json:"patterns,omitempty"`
		// SecuritySeverity is GitHub code scanning's rank of a
		// security rule's alerts (9.0+ critical, 7.0 high, 4.0 medium,
		// below low).
		SecuritySeverity string `json:"security-severity"`
	}
	// ArtifactLocation is a file (or a server's URL) as a URI reference.
	ArtifactLocation struct {
		URI string `json:"uri"`
	}
	// LogicalLocation is a tool's parameter or a tool, by name.
	LogicalLocation struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
)

// NewDriver returns this build's driver (buildinfo: the module version,
// or "(devel)"), without rules.
func NewDriver() Driver {
	return Driver{Name: "atlas-reproduce", InformationURI: InformationURI, Version: buildinfo.Read().Version}
}

// Encode writes v as the project's SARIF logs are written: indented JSON,
// with "<" and "&" as they are (the patterns hold "<", as in (?<!...);
// escaped as \u003c they would be valid but unreadable to people).
func Encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// The objects of the classify command's log alone.
type (
	sarifRun struct {
		Tool    Tool          `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifResult struct {
		RuleID    string          `json:"ruleId"`
		RuleIndex int             `json:"ruleIndex"`
		Level     string          `json:"level"`
		Message   Text            `json:"message"`
		Locations []sarifLocation `json:"locations"`
		// PartialFingerprints lets code scanning track an alert across
		// runs whatever line the tool moves to (see fingerprint).
		PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
		Properties          sarifResultFields `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical     `json:"physicalLocation"`
		LogicalLocations []LogicalLocation `json:"logicalLocations"`
	}
	sarifPhysical struct {
		ArtifactLocation ArtifactLocation `json:"artifactLocation"`
		// Region is absent for a server's URL, which has no lines.
		Region *sarifRegion `json:"region,omitempty"`
	}
	sarifRegion struct {
		StartLine int64 `json:"startLine,omitempty"`
	}
	sarifResultFields struct {
		ServerID *string `json:"serverId"`
		Tool     *string `json:"tool"`
		Property string  `json:"property"`
		Where    string  `json:"where"`
		Required bool    `json:"required"`
	}
)

// Writer collects the labelled properties of the classify command's
// tools and writes them as one SARIF 2.1.0 log: one result per (property,
// class), with the class id as the rule id.
//
// Only the five normative classes become results. The contextual buckets are
// non-normative, high-recall signals that fire on about half of all tools;
// as results they would bury the classes, so they are left out.
type Writer struct {
	log   Log[sarifRun]
	index map[string]int // rule id -> index in the driver's rules
}

// NewWriter returns a writer whose driver reports this build's version
// (buildinfo: the module version, or "(devel)").
func NewWriter() *Writer {
	s := &Writer{index: map[string]int{}}
	driver := NewDriver()
	for _, r := range classify.Rules() {
		if !r.Normative {
			continue
		}
		t := classTexts[r.ID]
		patterns := "Pattern: " + r.Patterns[0]
		if len(r.Patterns) > 1 {
			patterns = "Patterns (either one matching suffices): " + strings.Join(r.Patterns, " ; ")
		}
		s.index[r.ID] = len(driver.Rules)
		driver.Rules = append(driver.Rules, Rule{
			ID:               r.ID,
			Name:             t.name,
			ShortDescription: Text{t.short},
			FullDescription: Text{fmt.Sprintf("%s Assigned when re.search with re.IGNORECASE finds the Python pattern in lower(property name + \" : \" + description). %s",
				t.definition, patterns)},
			Help: Help{
				Text: fmt.Sprintf("%s This is a static, lexical pre-invocation signal from the property's name and description (parameter risk class %s): it does not observe what the tool does with the value. Review how the tool uses the parameter; the label is advisory and must not be the sole authorization decision.",
					t.definition, r.ID),
				Markdown: fmt.Sprintf("**%s** (`%s`): %s\n\n%s (Python, `re.IGNORECASE`, on `lower(name + \" : \" + description)`):\n\n```\n%s\n```\n\nA static, lexical pre-invocation signal: it does not observe what the tool does with the value. Review how the tool uses the parameter; the label is advisory and must not be the sole authorization decision.",
					t.name, r.ID, t.definition, plural(len(r.Patterns), "Pattern", "Patterns (either one matching suffices)"), strings.Join(r.Patterns, "\n")),
			},
			DefaultConfiguration: Configuration{t.level},
			Properties:           RuleProperties{Tags: []string{"security", "mcp", "parameter-risk-class"}, Patterns: r.Patterns, SecuritySeverity: t.severity},
		})
	}
	s.log = Log[sarifRun]{Schema: SchemaURI, Version: Version, Runs: []sarifRun{{
		Tool:    Tool{Driver: driver},
		Results: []sarifResult{},
	}}}
	return s
}

// Add records the results of one tool read at o. Class ids the writer has no
// rule for (none, from this classifier) are skipped rather than written with
// a dangling rule id.
func (s *Writer) Add(o label.Origin, t *label.ToolLabels) {
	run := &s.log.Runs[0]
	uri, isURL := artifactURI(o.File)
	var region *sarifRegion
	if !isURL {
		region = &sarifRegion{StartLine: max(o.Line, 1)}
	}
	tool := "(unnamed tool)"
	if t.Tool != nil {
		tool = *t.Tool
	}
	for _, p := range t.Properties {
		for _, id := range p.Classes {
			idx, ok := s.index[id]
			if !ok {
				continue
			}
			where := ""
			if p.Where != "" && p.Where != "properties" {
				where = " (in " + p.Where + ")"
			}
			req := ""
			if p.Required {
				req = "required "
			}
			msg := fmt.Sprintf("The %sparameter %q%s of tool %q is labelled %s: %s.", req, p.Name, where, tool, id,
				strings.ToLower(classTexts[id].short))
			var fp map[string]string
			if t.DefinitionSHA256 != "" {
				fp = map[string]string{fingerprintKey: fingerprint(t.ServerID, t.DefinitionSHA256, whereOrProperties(p.Where), p.Name)}
			}
			run.Results = append(run.Results, sarifResult{
				RuleID:              id,
				RuleIndex:           idx,
				Level:               classTexts[id].level,
				Message:             Text{msg},
				PartialFingerprints: fp,
				Locations: []sarifLocation{{
					PhysicalLocation: sarifPhysical{ArtifactLocation: ArtifactLocation{URI: uri}, Region: region},
					LogicalLocations: []LogicalLocation{{
						Name:               p.Name,
						FullyQualifiedName: tool + "/" + whereOrProperties(p.Where) + "/" + p.Name,
						Kind:               "parameter",
					}},
				}},
				Properties: sarifResultFields{ServerID: t.ServerID, Tool: t.Tool, Property: p.Name, Where: whereOrProperties(p.Where), Required: p.Required},
			})
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func whereOrProperties(w string) string {
	if w == "" {
		return "properties"
	}
	return w
}

// fingerprintKey names the one partial fingerprint; the version suffix
// lets its recipe change without matching old alerts wrongly.
const fingerprintKey = "atlasToolParameter/v1"

// fingerprint identifies a result across runs: the SHA-256 of the server
// id, the tool's definition hash and the parameter's place and name (the
// rule id is the class). The same tool served unchanged keeps its alerts
// wherever it moves in the file; a tool whose definition changed is
// reviewed again.
func fingerprint(serverID *string, definition, where, name string) string {
	h := sha256.New()
	if serverID != nil {
		h.Write([]byte{1})
		h.Write([]byte(*serverID))
	}
	for _, s := range []string{definition, where, name} {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// artifactURI turns a file name into the URI reference SARIF requires: a
// relative path stays relative (viewers resolve it against the checkout),
// with '\' turned into '/' and characters such as spaces percent-encoded; an
// absolute path becomes a file: URI; a server's http(s) URL (scan) is kept
// as the absolute URI it is, and isURL says so.
func artifactURI(file string) (uri string, isURL bool) {
	if file == "" {
		return "stdin", false
	}
	if u, err := url.Parse(file); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return u.String(), true
	}
	return PathURI(file), false
}

// PathURI is a file as a SARIF artifact URI: a relative path as a relative
// reference (viewers and code scanning resolve it against the checkout),
// with '\' turned into '/' and characters such as spaces percent-encoded;
// an absolute one as a file: URI.
func PathURI(file string) string {
	p := filepath.ToSlash(file)
	if filepath.IsAbs(file) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // a Windows volume: file:///C:/...
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// WriteTo writes the SARIF log as indented JSON.
func (s *Writer) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	err := Encode(cw, &s.log)
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
