package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/report/sarif"
)

// The SARIF 2.1.0 log of a config scan: one run per config file, so that
// each file is its own code-scanning category (automationDetails.id), and
// every result located at the file and line of its server, the line a
// developer edits. Only the properties written are modelled; the objects
// both SARIF logs write are report/sarif's.
type (
	cfgRun struct {
		Tool sarif.Tool `json:"tool"`
		// Invocations hold the one invocation, whose notifications name
		// the servers of the file that were not scanned and why.
		Invocations       []cfgInvocation `json:"invocations"`
		AutomationDetails cfgAutomation   `json:"automationDetails"`
		Artifacts         []cfgArtifact   `json:"artifacts"`
		Results           []cfgResult     `json:"results"`
		ColumnKind        string          `json:"columnKind"`
	}
	cfgInvocation struct {
		ExecutionSuccessful        bool              `json:"executionSuccessful"`
		ToolExecutionNotifications []cfgNotification `json:"toolExecutionNotifications"`
	}
	cfgNotification struct {
		Level     string        `json:"level"`
		Message   sarif.Text    `json:"message"`
		Locations []cfgLocation `json:"locations"`
	}
	cfgAutomation struct {
		ID string `json:"id"`
	}
	cfgArtifact struct {
		Location sarif.ArtifactLocation `json:"location"`
	}
	cfgResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             sarif.Text        `json:"message"`
		Locations           []cfgLocation     `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
		Suppressions        []cfgSuppression  `json:"suppressions,omitempty"`
		Properties          map[string]any    `json:"properties,omitempty"`
	}
	cfgLocation struct {
		PhysicalLocation cfgPhysical             `json:"physicalLocation"`
		LogicalLocations []sarif.LogicalLocation `json:"logicalLocations,omitempty"`
	}
	cfgPhysical struct {
		ArtifactLocation sarif.ArtifactLocation `json:"artifactLocation"`
		Region           cfgRegion              `json:"region"`
	}
	cfgRegion struct {
		StartLine int `json:"startLine"`
	}
	cfgSuppression struct {
		Kind          string       `json:"kind"`
		Status        string       `json:"status"`
		Justification string       `json:"justification"`
		Location      *cfgLocation `json:"location,omitempty"`
	}
)

// The rules of a config scan: the five classes, an unpinned server, and a
// tool changed since the lock. A class's name, summary, level and
// severity are those of the census SARIF (report/sarif); its help here
// says what to check in a configured server.
var cfgRules = []struct {
	id, name, short, help, severity string
}{
	{id: "gg:credential-value", help: "A parameter intended to carry an authentication secret or credential material: a token, API key, password, private key or authorization value. Check what the server does with it before an agent fills it in."},
	{id: "gg:filesystem-path", help: "A parameter that names a file, folder or target path. Check which paths the server lets an agent reach."},
	{id: "gg:command-string", help: "A parameter intended to carry a shell command, script, code, expression or SQL statement. An agent's input there can run code."},
	{id: "gg:money-amount", help: "A parameter that carries an amount of money or a currency."},
	{id: "gg:url-endpoint", help: "A parameter that addresses a URL, endpoint, host or webhook."},
	{"unpinned", "UnpinnedServer", "Server's command names no exact version",
		"The command (npx PKG, uvx PKG, an image without a tag or with latest) is resolved afresh at each start: what runs can change without any change to the config. Pin an exact version or digest.", "5.0"},
	{"tool-changed", "ToolChanged", "Tool changed since the lock",
		"A tool's definition changed, a tool was renamed, added or removed since the lock file pinned the server's tools. Review the change, then accept it with scan --lock FILE --approve.", "6.0"},
}

// cfgFingerprintKey names the partial fingerprint; its version lets the
// recipe change without matching old alerts wrongly.
const cfgFingerprintKey = "atlasConfigFinding/v1"

// cfgFingerprint identifies a result across scans whatever line its server
// moves to: the server's lock id (config file and name), the rule and the
// finding's place (tool and parameter, or the change and definition).
func cfgFingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\x00", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// configURI is a config file as a SARIF artifact URI, its path cleaned.
func configURI(file string) string { return sarif.PathURI(filepath.Clean(file)) }

// writeConfigSARIF writes the servers' findings as one SARIF 2.1.0 log.
// Suppressed findings are results with an external, accepted suppression
// that carries the reason; approved changes are no results.
func writeConfigSARIF(w io.Writer, servers []configServer) error {
	driver := sarif.NewDriver()
	index := map[string]int{}
	for i, r := range cfgRules {
		level := sarif.Level(r.id)
		if name, short, severity, ok := sarif.ClassRule(r.id); ok {
			r.name, r.short, r.severity = name, short, severity
		} else {
			level = "warning"
		}
		index[r.id] = i
		driver.Rules = append(driver.Rules, sarif.Rule{
			ID: r.id, Name: r.name, ShortDescription: sarif.Text{Text: r.short}, FullDescription: sarif.Text{Text: r.help},
			Help:                 sarif.Help{Text: r.help, Markdown: "**" + r.short + "** (`" + r.id + "`): " + r.help},
			DefaultConfiguration: sarif.Configuration{Level: level},
			Properties:           sarif.RuleProperties{Tags: []string{"security", "mcp", "mcp-config"}, SecuritySeverity: r.severity},
		})
	}
	log := sarif.Log[cfgRun]{Schema: sarif.SchemaURI, Version: sarif.Version, Runs: []cfgRun{}}
	runOf := map[string]int{}
	for _, s := range servers {
		uri := configURI(s.File)
		ri, ok := runOf[uri]
		if !ok {
			ri = len(log.Runs)
			runOf[uri] = ri
			log.Runs = append(log.Runs, cfgRun{
				Tool: sarif.Tool{Driver: driver},
				// The id up to its last slash is code scanning's
				// category: one per config file, so that each file's
				// alerts are tracked apart.
				AutomationDetails: cfgAutomation{ID: "atlas-reproduce/scan-config/" + strings.TrimPrefix(uri, "file:///") + "/"},
				Artifacts:         []cfgArtifact{{Location: sarif.ArtifactLocation{URI: uri}}},
				Results:           []cfgResult{},
				Invocations:       []cfgInvocation{{ExecutionSuccessful: true, ToolExecutionNotifications: []cfgNotification{}}},
				ColumnKind:        "unicodeCodePoints",
			})
		}
		run := &log.Runs[ri]
		at := cfgPhysical{ArtifactLocation: sarif.ArtifactLocation{URI: uri}, Region: cfgRegion{StartLine: max(s.Line, 1)}}
		add := func(rule, msg string, logical []sarif.LogicalLocation, sup *suppressedClass, fp ...string) {
			r := cfgResult{
				RuleID: rule, RuleIndex: index[rule], Level: driver.Rules[index[rule]].DefaultConfiguration.Level,
				Message:             sarif.Text{Text: msg},
				Locations:           []cfgLocation{{PhysicalLocation: at, LogicalLocations: logical}},
				PartialFingerprints: map[string]string{cfgFingerprintKey: cfgFingerprint(append([]string{s.ID, rule}, fp...)...)},
				Properties:          map[string]any{"server": s.Name, "client": string(s.Client)},
			}
			if sup != nil {
				r.Suppressions = []cfgSuppression{{Kind: "external", Status: "accepted", Justification: sup.Reason,
					Location: suppressionLocation(sup.At)}}
			}
			run.Results = append(run.Results, r)
		}
		if why := notScanned(s); why != "" {
			inv := &run.Invocations[0]
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, cfgNotification{
				Level: "warning", Message: sarif.Text{Text: fmt.Sprintf("MCP server %q was not scanned: %s", s.Name, why)},
				Locations: []cfgLocation{{PhysicalLocation: at}}})
		}
		if s.Unpinned && !s.Disabled {
			add("unpinned", fmt.Sprintf("MCP server %q (%s) runs %s %s with no exact version: the client resolves it afresh at every start.",
				s.Name, s.Client, s.Target.Kind, s.Target.Package), nil, s.UnpinnedSuppressed)
		}
		for _, t := range s.Tools {
			suppressed := map[string]*suppressedClass{}
			for i := range t.Suppressed {
				suppressed[t.Suppressed[i].Class] = &t.Suppressed[i]
			}
			for _, p := range t.Properties {
				for _, c := range p.Classes {
					where := p.Where
					if where == "" {
						where = "properties"
					}
					add(c, fmt.Sprintf("MCP server %q: the parameter %q of tool %q is labelled %s.", s.Name, p.Name, t.Name, c),
						[]sarif.LogicalLocation{{Name: p.Name, FullyQualifiedName: s.Name + "/" + t.Name + "/" + where + "/" + p.Name, Kind: "parameter"}},
						suppressed[c], t.Name, where, p.Name)
				}
			}
		}
		if !s.ChangesApproved {
			for _, c := range s.Changes {
				msg := fmt.Sprintf("MCP server %q: tool %s %s since the lock", s.Name, toolid.ToolName(c.Tool()), c.Kind)
				if c.Kind == toolid.Renamed {
					msg = fmt.Sprintf("MCP server %q: tool %s renamed %s since the lock", s.Name, toolid.ToolName(c.Old), toolid.ToolName(c.New))
				}
				if c.SchemaChanged {
					msg += " (input schema changed)"
				}
				if len(c.ClassesGained) > 0 {
					msg += "; gained " + strings.Join(c.ClassesGained, ", ")
				}
				add("tool-changed", msg+".", []sarif.LogicalLocation{{Name: toolid.ToolName(c.Tool()), FullyQualifiedName: s.Name + "/" + toolid.ToolName(c.Tool()), Kind: "function"}},
					nil, c.Kind.String(), toolid.ToolName(c.Tool()), c.Tool().Definition)
			}
		}
	}
	return sarif.Encode(w, &log)
}

// suppressionLocation points a suppression at the file and line it is
// written on (FILE:LINE as suppression.At holds it).
func suppressionLocation(at string) *cfgLocation {
	i := strings.LastIndexByte(at, ':')
	line := 0
	if i < 0 {
		return nil
	}
	if _, err := fmt.Sscanf(at[i+1:], "%d", &line); err != nil || line < 1 {
		return nil
	}
	return &cfgLocation{PhysicalLocation: cfgPhysical{ArtifactLocation: sarif.ArtifactLocation{URI: configURI(at[:i])}, Region: cfgRegion{StartLine: line}}}
}

// notScanned is why an enabled server's tools are not in the log (its
// state), or "" when they are or the scan listed only.
func notScanned(s configServer) string {
	if s.Disabled || s.Scan == "" || s.doc != nil {
		return ""
	}
	return s.Scan
}
