// Package sample holds the format of a labelling sample (sample.jsonl,
// strata.json, labels-NAME.jsonl) and the seeded stratified draw that makes
// one, so that evaluate reads a sample drawn here or anywhere else alike.
package sample

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Definitions are the five classes as a rater reads them (from the spec's
// definitions; docs/labelling-guide.md gives the full guide), by short name.
var Definitions = map[string]string{
	"credential": "carries an authentication secret or credential material: a token, API key, password, private key, client secret, bearer/authorization value, session cookie. Not: a username, an account id, a token count, a pagination token.",
	"filesystem": "names a filesystem location: a file path, file name, directory or folder, a target/destination path on disk. Not: a URL path, a JSON path, a route, a database table.",
	"command":    "carries an executable string or fragment an engine interprets: a shell/system command, script, code, expression, SQL statement, argument vector, or a free-form instruction or prompt for an interpreter or model. Not: a colour, country or status code, an ordinary search query.",
	"money":      "carries a monetary quantity or a currency designation: an amount, price, total, sum, charge, refund, unit amount, cents, a currency code. Not: a count of results, a page total, a price id.",
	"url":        "addresses a network destination: a URL/URI, endpoint, host or hostname, domain, link, webhook, base/callback URL. Not: a file path, an email address, a resource id, the id of a domain object.",
}

// Classes are the five classes in the short names labels use, in the
// order every table shows them.
var Classes = []string{"credential", "filesystem", "command", "money", "url"}

// ClassID maps a short class name to the spec's class id.
var ClassID = map[string]string{
	"credential": "gg:credential-value",
	"filesystem": "gg:filesystem-path",
	"command":    "gg:command-string",
	"money":      "gg:money-amount",
	"url":        "gg:url-endpoint",
}

// ShortName maps a spec class id (or a short name) to its short name; ok
// is false for anything else.
func ShortName(id string) (string, bool) {
	for s, full := range ClassID {
		if id == full || id == s {
			return s, true
		}
	}
	return "", false
}

// Item is one line of sample.jsonl: a property (or, with unit "tool", a
// tool) to label, with the tool's context and the classes the rules give.
type Item struct {
	ID              int      `json:"id"`
	Stratum         string   `json:"stratum"`
	Server          string   `json:"server"`
	Tool            string   `json:"tool"`
	ToolDescription string   `json:"tool_description"`
	Property        string   `json:"property,omitempty"`
	Description     string   `json:"description,omitempty"`
	Rule            []string `json:"rule"`
}

// RuleHas reports whether the rules gave the item class (a short name).
func (it Item) RuleHas(class string) bool {
	return slices.Contains(it.Rule, ClassID[class]) || slices.Contains(it.Rule, class)
}

// Designs of strata.json.
const (
	// Disjoint strata partition the population: each item weighs its
	// stratum's population over its sample size.
	Disjoint = "disjoint"
	// PerClass strata are drawn one per class from that class's
	// rule-positives (overlapping in the population) plus one
	// rule-negative stratum.
	PerClass = "per-class"
)

// Stratum is one stratum of strata.json.
type Stratum struct {
	Population int `json:"population"`
	Drawn      int `json:"drawn"`
	// Class is the spec class the stratum was drawn for (per-class design);
	// nil for the rule-negative stratum and for disjoint strata.
	Class *string `json:"class"`
}

// Strata is strata.json.
type Strata struct {
	Unit       string             `json:"unit"`                            // "property" or "tool"
	Population int                `json:"population_properties,omitempty"` // the whole population, when known
	Design     string             `json:"design,omitempty"`                // Disjoint (default) or PerClass
	Seed       *int64             `json:"seed,omitempty"`
	Strata     map[string]Stratum `json:"strata"`
}

// Sample is a sample folder read whole.
type Sample struct {
	Strata Strata
	Items  []Item
}

// Read reads sample.jsonl and strata.json from dir and checks that they
// agree: every item's stratum exists and each stratum holds as many items as
// it says were drawn.
func Read(dir string) (*Sample, error) {
	sp := filepath.Join(dir, "strata.json")
	b, err := os.ReadFile(sp)
	if err != nil {
		return nil, err
	}
	var s Sample
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s.Strata); err != nil {
		return nil, fmt.Errorf("%s: %w", sp, err)
	}
	if s.Strata.Design == "" {
		s.Strata.Design = Disjoint
	}
	if s.Strata.Design != Disjoint && s.Strata.Design != PerClass {
		return nil, fmt.Errorf("%s: design %q is neither %q nor %q", sp, s.Strata.Design, Disjoint, PerClass)
	}
	if s.Strata.Unit == "" {
		s.Strata.Unit = "property"
	}
	if len(s.Strata.Strata) == 0 {
		return nil, fmt.Errorf("%s: no strata", sp)
	}
	negs := 0
	for name, st := range s.Strata.Strata {
		if st.Population < st.Drawn || st.Drawn < 0 {
			return nil, fmt.Errorf("%s: stratum %q draws %d from a population of %d", sp, name, st.Drawn, st.Population)
		}
		if st.Class == nil {
			negs++
		} else if _, ok := ShortName(*st.Class); !ok {
			return nil, fmt.Errorf("%s: stratum %q names unknown class %q", sp, name, *st.Class)
		}
	}
	if s.Strata.Design == PerClass && negs != 1 {
		return nil, fmt.Errorf("%s: a per-class design needs exactly one rule-negative stratum (class null); found %d", sp, negs)
	}
	ip := filepath.Join(dir, "sample.jsonl")
	seen := map[int]bool{}
	count := map[string]int{}
	err = eachJSONLine(ip, func(it Item, where string) error {
		if _, ok := s.Strata.Strata[it.Stratum]; !ok {
			return fmt.Errorf("%s: item %d names stratum %q, which strata.json does not list", where, it.ID, it.Stratum)
		}
		if seen[it.ID] {
			return fmt.Errorf("%s: item id %d appears twice", where, it.ID)
		}
		for _, c := range it.Rule {
			if _, ok := ShortName(c); !ok {
				return fmt.Errorf("%s: item %d: unknown rule class %q", where, it.ID, c)
			}
		}
		seen[it.ID] = true
		count[it.Stratum]++
		s.Items = append(s.Items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for name, st := range s.Strata.Strata {
		if count[name] != st.Drawn {
			return nil, fmt.Errorf("%s: stratum %q holds %d items; strata.json says %d were drawn", ip, name, count[name], st.Drawn)
		}
	}
	return &s, nil
}

// eachJSONLine calls fn with every non-blank line of the file path (one
// of the sample's own files) decoded into a T, strictly: a field T does
// not have is an error naming the file and line.
func eachJSONLine[T any](path string, fn func(v T, where string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return eachLine(f, path, maxLine, func(line []byte, where string) error {
		var v T
		d := json.NewDecoder(bytes.NewReader(line))
		d.DisallowUnknownFields()
		if err := d.Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		return fn(v, where)
	})
}

// maxLine bounds one line of the sample's own files.
const maxLine = 16 << 20

// eachLine calls fn with every non-blank line of r, of at most maxLen bytes,
// and "file:line".
func eachLine(r io.Reader, name string, maxLen int, fn func(line []byte, where string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLen)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(line, fmt.Sprintf("%s:%d", name, n)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return nil
}

// Label is one line of labels-NAME.jsonl: one rater's answer for one item.
type Label struct {
	ID         int  `json:"id"`
	Credential bool `json:"credential"`
	Filesystem bool `json:"filesystem"`
	Command    bool `json:"command"`
	Money      bool `json:"money"`
	URL        bool `json:"url"`
	// Note is the rater's few words on a hard call; optional.
	Note string `json:"note,omitempty"`
}

// Has reports the label's answer for a class's short name.
func (l Label) Has(class string) bool {
	switch class {
	case "credential":
		return l.Credential
	case "filesystem":
		return l.Filesystem
	case "command":
		return l.Command
	case "money":
		return l.Money
	case "url":
		return l.URL
	}
	return false
}

// Rater is one rater's labels, by item id.
type Rater struct {
	Name   string
	Labels map[int]Label
}

// ReadLabels reads a labels file. A later line for the same id replaces an
// earlier one (the labelling page appends a corrected answer); ids not in
// known are an error naming the line.
func ReadLabels(path string, known map[int]bool) (Rater, error) {
	r := Rater{Name: raterName(path), Labels: map[int]Label{}}
	err := eachJSONLine(path, func(l Label, where string) error {
		if known != nil && !known[l.ID] {
			return fmt.Errorf("%s: id %d is not in the sample", where, l.ID)
		}
		r.Labels[l.ID] = l
		return nil
	})
	return r, err
}

// raterName is NAME of labels-NAME.jsonl, or the file's base name.
func raterName(path string) string {
	b := filepath.Base(path)
	ext := filepath.Ext(b)
	b = b[:len(b)-len(ext)]
	if len(b) > len("labels-") && b[:len("labels-")] == "labels-" {
		return b[len("labels-"):]
	}
	return b
}
