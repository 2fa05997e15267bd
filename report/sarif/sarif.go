// Package sarif writes the labels as SARIF 2.1.0, for code-scanning viewers
// and GitHub code scanning.
package sarif

import (
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

// SARIF constants. The schema URI is the one SARIF viewers and GitHub code
// scanning recognise for 2.1.0.
const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
	// sarifLevel is "note": a label is an advisory signal about a parameter
	// (the spec says the labels must not be the sole authorization
	// decision), not a defect, so by default it should not fail a CI
	// check. A user who wants it to can raise the level with the viewer's
	// or the CI's configuration, which overrides defaultConfiguration.
	sarifLevel = "note"
	// sarifInformationURI is where the driver points readers for the tool.
	sarifInformationURI = "https://github.com/atlas-reproduce/atlas-reproduce"
)

// classText describes a class for SARIF viewers: a PascalCase rule name, a
// one-line summary and the spec's definition.
type classText struct {
	name, short, definition string
}

var classTexts = map[string]classText{
	"gg:credential-value": {"CredentialValue", "Parameter carries a credential or secret",
		"A parameter intended to carry an authentication secret or credential material, such as a token, API key, password, private key, or bearer/authorization value."},
	"gg:filesystem-path": {"FilesystemPath", "Parameter names a filesystem location",
		"A parameter that names a filesystem location: a file path, file name, directory, folder, or an explicit target/destination path."},
	"gg:command-string": {"CommandString", "Parameter carries an executable string",
		"A parameter intended to carry an executable string or fragment: a shell/system command, script, code, expression, SQL statement, arguments vector, or a free-form instruction interpreted by an execution engine."},
	"gg:money-amount": {"MoneyAmount", "Parameter carries a monetary amount or currency",
		"A parameter that carries a monetary quantity or currency designation: an amount, price, total, sum, currency, or a domain-specific refund/charge/unit amount expressed in cents."},
	"gg:url-endpoint": {"UrlEndpoint", "Parameter addresses an external network destination",
		"A parameter that addresses an external network destination: a URL/URI, endpoint, host/hostname/domain, link, webhook, or an explicit base/target/callback URL."},
}

// SARIF 2.1.0 objects, only the properties this writer fills.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Version        string      `json:"version"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string          `json:"id"`
		Name                 string          `json:"name"`
		ShortDescription     sarifText       `json:"shortDescription"`
		FullDescription      sarifText       `json:"fullDescription"`
		Help                 sarifHelp       `json:"help"`
		DefaultConfiguration sarifConfig     `json:"defaultConfiguration"`
		Properties           sarifRuleFields `json:"properties"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifHelp struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifRuleFields struct {
		Tags     []string `json:"tags"`
		Patterns []string `json:"patterns"`
	}
	sarifResult struct {
		RuleID     string            `json:"ruleId"`
		RuleIndex  int               `json:"ruleIndex"`
		Level      string            `json:"level"`
		Message    sarifText         `json:"message"`
		Locations  []sarifLocation   `json:"locations"`
		Properties sarifResultFields `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical  `json:"physicalLocation"`
		LogicalLocations []sarifLogical `json:"logicalLocations"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           sarifRegion   `json:"region"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int64 `json:"startLine"`
	}
	sarifLogical struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
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
	log   sarifLog
	index map[string]int // rule id -> index in the driver's rules
}

// NewWriter returns a writer whose driver reports this build's version
// (buildinfo: the module version, or "(devel)").
func NewWriter() *Writer {
	s := &Writer{index: map[string]int{}}
	driver := sarifDriver{Name: "atlas-reproduce", InformationURI: sarifInformationURI, Version: buildinfo.Read().Version}
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
		driver.Rules = append(driver.Rules, sarifRule{
			ID:               r.ID,
			Name:             t.name,
			ShortDescription: sarifText{t.short},
			FullDescription: sarifText{fmt.Sprintf("%s Assigned when re.search with re.IGNORECASE finds the Python pattern in lower(property name + \" : \" + description). %s",
				t.definition, patterns)},
			Help: sarifHelp{
				Text: fmt.Sprintf("%s This is a static, lexical pre-invocation signal from the property's name and description (parameter risk class %s): it does not observe what the tool does with the value. Review how the tool uses the parameter; the label is advisory and must not be the sole authorization decision.",
					t.definition, r.ID),
				Markdown: fmt.Sprintf("**%s** (`%s`): %s\n\n%s (Python, `re.IGNORECASE`, on `lower(name + \" : \" + description)`):\n\n```\n%s\n```\n\nA static, lexical pre-invocation signal: it does not observe what the tool does with the value. Review how the tool uses the parameter; the label is advisory and must not be the sole authorization decision.",
					t.name, r.ID, t.definition, plural(len(r.Patterns), "Pattern", "Patterns (either one matching suffices)"), strings.Join(r.Patterns, "\n")),
			},
			DefaultConfiguration: sarifConfig{sarifLevel},
			Properties:           sarifRuleFields{Tags: []string{"mcp", "parameter-risk-class"}, Patterns: r.Patterns},
		})
	}
	s.log = sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{{
		Tool:    sarifTool{Driver: driver},
		Results: []sarifResult{},
	}}}
	return s
}

// Add records the results of one tool read at o. Class ids the writer has no
// rule for (none, from this classifier) are skipped rather than written with
// a dangling rule id.
func (s *Writer) Add(o label.Origin, t *label.ToolLabels) {
	run := &s.log.Runs[0]
	uri := artifactURI(o.File)
	line := max(o.Line, 1)
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
			run.Results = append(run.Results, sarifResult{
				RuleID:    id,
				RuleIndex: idx,
				Level:     sarifLevel,
				Message:   sarifText{msg},
				Locations: []sarifLocation{{
					PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: uri}, Region: sarifRegion{StartLine: line}},
					LogicalLocations: []sarifLogical{{
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

// artifactURI turns a file name into the URI reference SARIF requires: a
// relative path stays relative (viewers resolve it against the checkout),
// with '\' turned into '/' and characters such as spaces percent-encoded; an
// absolute path becomes a file: URI.
func artifactURI(file string) string {
	if file == "" {
		return "stdin"
	}
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
	enc := json.NewEncoder(cw)
	enc.SetIndent("", "  ")
	// The patterns hold "<" ((?<!...)); escaped as \u003c they would be
	// valid but unreadable to people reading the log.
	enc.SetEscapeHTML(false)
	err := enc.Encode(&s.log)
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
