package census

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// DefaultInspectDepth is how many components a key path may have before
// Inspector stops descending: deep enough for
// tools[].inputSchema.$defs.*.properties.*.description, shallow enough that
// a pathological line does not flood the summary.
const DefaultInspectDepth = 8

// Inspector summarises the structure of census lines so that a user can see
// whether a file fits the record shapes before running the census: how many
// lines of each shape, and how often each key path occurs. It reads lines
// with a Decoder, then builds each whole line as generic values; it is
// meant for the first few thousand records, not for a whole corpus.
//
// A key path joins object keys with "." and marks list elements with "[]";
// the keys of a properties, definitions or $defs object are written "*", so
// that tools[].inputSchema.properties.*.description counts every property's
// description. The zero value is ready to use.
type Inspector struct {
	// MaxDepth caps the components of a key path; 0 means
	// DefaultInspectDepth.
	MaxDepth int

	lines, blank, invalid, records int
	shapes                         map[string]int
	paths                          map[string]*pathStat
	order                          []string // paths in first-seen order
	dec                            Decoder
	lx                             Lexer
}

// pathStat counts one key path.
type pathStat struct {
	first   int // rank in first-seen order
	records int // records holding the path at least once
	count   int // occurrences
	last    int // the last record counted in records
	kinds   [jDict + 1]int
}

// kindNames are the Python type names Inspector reports values by.
var kindNames = [...]string{jNull: "null", jBool: "bool", jInt: "int", jFloat: "float", jString: "str", jList: "list", jDict: "dict"}

// Add reads one line. Blank lines are counted and skipped, as the census
// skips them; a line that is not JSON, or not a record shape, is counted and
// its error returned (the key paths of a valid JSON line that is not a
// record are still counted: they are what a user needs to see).
func (in *Inspector) Add(line []byte) error {
	in.lines++
	if IsBlank(line) {
		in.blank++
		return nil
	}
	rec, err := in.dec.Decode(line)
	var re *RecordError
	if err != nil && !errors.As(err, &re) {
		in.invalid++
		return err
	}
	in.lx.Reset(line)
	v, _, verr := buildValue(&in.lx, in.lx.WS(0), 0)
	in.lx.Reset(nil)
	if verr != nil {
		// Not reached: the Decoder has accepted the line.
		in.invalid++
		return verr
	}
	in.records++
	if in.paths == nil {
		in.paths = map[string]*pathStat{}
		in.shapes = map[string]int{}
	}
	in.walk(v, "", 0, false)
	if err != nil {
		in.shapes["not a record"]++
		return err
	}
	in.shapes[rec.Shape.String()]++
	return nil
}

// walk counts the paths under v, whose own path is path with depth
// components; wild says v's keys are names (properties and the like) and
// are counted together as "*".
func (in *Inspector) walk(v *jsonValue, path string, depth int, wild bool) {
	if depth > 0 {
		st := in.paths[path]
		if st == nil {
			st = &pathStat{first: len(in.order)}
			in.paths[path] = st
			in.order = append(in.order, path)
		}
		st.count++
		if st.last != in.records {
			st.last = in.records
			st.records++
		}
		st.kinds[v.kind]++
	}
	limit := in.MaxDepth
	if limit <= 0 {
		limit = DefaultInspectDepth
	}
	if depth >= limit {
		return
	}
	switch v.kind {
	case jList:
		for _, e := range v.list {
			in.walk(e, path+"[]", depth+1, false)
		}
	case jDict:
		for _, k := range v.keys {
			comp := "*"
			if !wild {
				comp = pathKey(k)
			}
			child := comp
			if path != "" {
				child = path + "." + comp
			}
			names := !wild && (k == "properties" || k == "definitions" || k == "$defs")
			in.walk(v.vals[k], child, depth+1, names)
		}
	}
}

// pathKey writes a key as a path component, quoted when it could be read
// as path syntax or is not plain text.
func pathKey(k string) string {
	if k == "" || strings.ContainsAny(k, ".[]*\" ") {
		return strconv.Quote(k)
	}
	for _, r := range k {
		if r < 0x20 || r == 0x7f || r == 0xfffd || (r >= 0x80 && !strconv.IsPrint(r)) {
			return strconv.Quote(k)
		}
	}
	if !strconv.CanBackquote(k) {
		return strconv.Quote(k)
	}
	return k
}

// Write prints the summary: line counts, shapes, then the n most frequent
// key paths (all of them when n <= 0) with the records holding each, its
// occurrences and the types of its values.
func (in *Inspector) Write(w io.Writer, n int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "lines: %d (blank %d, not JSON %d, records %d)\n", in.lines, in.blank, in.invalid, in.records)
	b.WriteString("shapes:")
	names := make([]string, 0, len(in.shapes))
	for s := range in.shapes {
		names = append(names, s)
	}
	sort.Slice(names, func(i, j int) bool {
		if in.shapes[names[i]] != in.shapes[names[j]] {
			return in.shapes[names[i]] > in.shapes[names[j]]
		}
		return names[i] < names[j]
	})
	if len(names) == 0 {
		b.WriteString(" none")
	}
	for _, s := range names {
		fmt.Fprintf(&b, " %s %d (%s)", s, in.shapes[s], pct(in.shapes[s], in.records))
	}
	b.WriteString("\n")

	paths := append([]string(nil), in.order...)
	sort.SliceStable(paths, func(i, j int) bool {
		return in.paths[paths[i]].records > in.paths[paths[j]].records
	})
	shown := len(paths)
	if n > 0 && n < shown {
		shown = n
	}
	fmt.Fprintf(&b, "key paths: %d distinct", len(paths))
	if shown < len(paths) {
		fmt.Fprintf(&b, ", the %d most frequent", shown)
	}
	b.WriteString("\n")
	if shown > 0 {
		kinds := make([]string, shown)
		width := len("types")
		for i, p := range paths[:shown] {
			kinds[i] = kindsOf(in.paths[p])
			width = max(width, len(kinds[i]))
		}
		fmt.Fprintf(&b, "%9s %7s %9s  %-*s  %s\n", "records", "%", "count", width, "types", "path")
		for i, p := range paths[:shown] {
			st := in.paths[p]
			fmt.Fprintf(&b, "%9d %7s %9d  %-*s  %s\n", st.records, pct(st.records, in.records), st.count, width, kinds[i], p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// kindsOf lists the value types seen at a path, with counts when mixed.
func kindsOf(st *pathStat) string {
	var parts []string
	for k, c := range st.kinds {
		if c > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", kindNames[k], c))
		}
	}
	if len(parts) == 1 {
		return parts[0][:strings.IndexByte(parts[0], ':')]
	}
	return strings.Join(parts, " ")
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
}
