package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"go.yaml.in/yaml/v3"
)

// suppression accepts a finding: a class (or "unpinned") on a server's
// tool, with the reason a reviewer gave and, optionally, the last day it
// holds. An expired suppression no longer suppresses.
type suppression struct {
	Class   string `yaml:"class" json:"class"`
	Server  string `yaml:"server" json:"server"`
	Tool    string `yaml:"tool,omitempty" json:"tool,omitempty"`
	Reason  string `yaml:"reason" json:"reason"`
	Expires string `yaml:"expires,omitempty" json:"expires,omitempty"`
	// At is the file and line the suppression is written on.
	At string `yaml:"-" json:"at"`
	// until is the first instant it no longer holds (zero: never).
	until time.Time
}

// suppressedClass is a finding a suppression accepts, as the outputs list
// it.
type suppressedClass struct {
	Class   string `json:"class"`
	Reason  string `json:"reason"`
	Expires string `json:"expires,omitempty"`
	At      string `json:"at"`
}

// maxSuppressionsBytes bounds the file: a list people write by hand.
const maxSuppressionsBytes = 4 << 20

// readSuppressions reads a suppressions file, YAML or JSON (YAML reads
// both):
//
//	suppressions:
//	  - class: command-string   # a class, or unpinned
//	    server: github          # the configured name, the lock's id, or *
//	    tool: run_shell         # optional: every tool of the server without it, * too
//	    reason: runs only in the CI container
//	    expires: 2026-12-31     # optional: the last day it holds (UTC)
//
// Every error names the file and line.
func readSuppressions(path string) ([]suppression, error) {
	data, err := openreg.ReadFile(path, maxSuppressionsBytes)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(root.Content) == 0 {
		return nil, nil // an empty file suppresses nothing
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping with the key suppressions", path, doc.Line)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if k := doc.Content[i]; k.Value != "suppressions" {
			return nil, fmt.Errorf("%s:%d: unknown key %q (want suppressions)", path, k.Line, k.Value)
		}
		list = doc.Content[i+1]
	}
	if list == nil || list.Tag == "!!null" {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: suppressions is not a list", path, list.Line)
	}
	known := []string{"class", "server", "tool", "reason", "expires"}
	var out []suppression
	for _, n := range list.Content {
		at := fmt.Sprintf("%s:%d", path, n.Line)
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: a suppression is a mapping of %s", at, strings.Join(known, ", "))
		}
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(known, k.Value) {
				return nil, fmt.Errorf("%s:%d: unknown key %q (want %s)", path, k.Line, k.Value, strings.Join(known, ", "))
			}
		}
		var s suppression
		if err := n.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		s.At = at
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// check normalises the class and reads the expiry; a suppression without
// a class, a server or a reason is refused, so that no finding is accepted
// without a stated why.
func (s *suppression) check() error {
	switch {
	case s.Class == "":
		return fmt.Errorf("no class (a class such as command-string, or unpinned)")
	case s.Server == "":
		return fmt.Errorf("no server (its configured name, or *)")
	case strings.TrimSpace(s.Reason) == "":
		return fmt.Errorf("no reason: say why the finding is accepted")
	}
	if strings.EqualFold(s.Class, "unpinned") {
		s.Class = "unpinned"
	} else {
		ids, err := classify.ParseClasses(s.Class)
		if err != nil {
			return err
		}
		if len(ids) != 1 {
			return fmt.Errorf("class %q: want one class per suppression", s.Class)
		}
		s.Class = ids[0]
	}
	if s.Expires != "" {
		d, err := time.Parse(time.DateOnly, s.Expires)
		if err != nil {
			return fmt.Errorf("expires %q: want a date, YYYY-MM-DD", s.Expires)
		}
		s.until = d.AddDate(0, 0, 1) // it holds through its last day
	}
	return nil
}

// expired says s no longer holds at now.
func (s *suppression) expired(now time.Time) bool {
	return !s.until.IsZero() && !now.Before(s.until)
}

func (s *suppression) matches(srv *configServer, class, tool string) bool {
	return s.Class == class &&
		(s.Server == "*" || s.Server == srv.Name || s.Server == srv.ID) &&
		(s.Tool == "" || s.Tool == "*" || s.Tool == tool)
}

func (s *suppression) accepted() suppressedClass {
	return suppressedClass{Class: s.Class, Reason: s.Reason, Expires: s.Expires, At: s.At}
}

// suppress applies the suppressions in force at now to the servers'
// findings: a suppressed class moves from a tool's classes to its
// suppressed list, a suppressed unpinned server is marked so, and neither
// counts for --fail-on. Expired suppressions are named on warn.
func suppress(list []suppression, servers []configServer, now time.Time, warn io.Writer) {
	var live []*suppression
	for i := range list {
		s := &list[i]
		if s.expired(now) {
			fmt.Fprintln(warn, termtext.Safe(fmt.Sprintf("scan: %s: the suppression of %s on %s expired on %s; it no longer applies", s.At, s.Class, s.Server, s.Expires)))
			continue
		}
		live = append(live, s)
	}
	find := func(srv *configServer, class, tool string) *suppression {
		for _, s := range live {
			if s.matches(srv, class, tool) {
				return s
			}
		}
		return nil
	}
	for i := range servers {
		srv := &servers[i]
		if srv.Unpinned {
			if s := find(srv, "unpinned", ""); s != nil {
				a := s.accepted()
				srv.UnpinnedSuppressed = &a
			}
		}
		for j := range srv.Tools {
			t := &srv.Tools[j]
			kept := t.Classes[:0:0]
			for _, c := range t.Classes {
				if s := find(srv, c, t.Name); s != nil {
					t.Suppressed = append(t.Suppressed, s.accepted())
				} else {
					kept = append(kept, c)
				}
			}
			t.Classes = kept
		}
	}
}
