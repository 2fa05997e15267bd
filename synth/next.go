package synth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/internal/gunzip"
	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// EditsFile lists the edits Next made, for a reader to check a diff by.
const EditsFile = "edits.json"

// Kinds of Edit.
const (
	EditAdded   = "added"   // a new tool at the end of a server's list
	EditRemoved = "removed" // a tool taken out
	EditChanged = "changed" // a tool given a new key: another definition, the same labels
	EditGained  = "gained"  // a tool given an api_key property: changed, and gains gg:credential-value
)

// Edit is one seeded change Next made to a census.
type Edit struct {
	Kind     string `json:"change"`
	ServerID string `json:"server_id"`
	Tool     string `json:"tool"`
}

// Next writes into dir a next release of the synthetic census in from:
// its server_tools.jsonl.gz with edits seeded edits (tools added, removed,
// changed, and changed so as to gain gg:credential-value), its other files
// as they are, a SHA256SUMS of the three and edits.json, the edits made.
// So that `diff` can be tried on two releases at once, and checked: a diff
// of the two runs reports exactly these edits. Only the lines of the
// servers shape whose server_id is a string and whose JSON encoding/json
// reads as CPython does (no NaN, no lone surrogate) are edited, one edit a
// line, and only tools whose name is unique on their server, so that no
// other tool's identity (server, name, ordinal) moves; every other byte is
// kept. There is no truth.json: the counts are the run's to find.
func Next(ctx context.Context, from, dir string, edits int, seed uint64) ([]Edit, error) {
	src := filepath.Join(from, release.ToolsFile)
	editable, err := countEditable(ctx, src)
	if err != nil {
		return nil, err
	}
	if edits < 1 || edits > editable {
		return nil, fmt.Errorf("synth: %d edits asked of %s, which has %d lines that can be edited", edits, src, editable)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x6e657874))
	// edits distinct lines among the editable ones, each with a kind.
	chosen := map[int]string{}
	kinds := []string{EditAdded, EditRemoved, EditChanged, EditGained}
	for _, i := range rng.Perm(editable)[:edits] {
		chosen[i] = kinds[rng.IntN(len(kinds))]
	}

	set, err := outset.Open(dir)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	sums := map[string]string{}
	var made []Edit
	o, err := release.Create(set, release.ToolsFile, release.Compression{Gzip: true, Parallel: 2, Block: gzipBlock})
	if err != nil {
		return nil, err
	}
	if made, err = rewrite(ctx, src, o, chosen, rng); err != nil {
		o.Abort()
		return nil, err
	}
	if sums[release.ToolsFile], err = o.Finish(); err != nil {
		return nil, err
	}
	for _, name := range []string{release.ServersFile, release.CandidatesFile} {
		if sums[name], err = copyInto(set, filepath.Join(from, name), name); err != nil {
			return nil, err
		}
	}
	if err := release.WriteSums(set, sums); err != nil {
		return nil, err
	}
	list, err := json.MarshalIndent(made, "", "  ")
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{EditsFile, append(list, '\n')}} {
		o, err := release.Create(set, f.name, release.Compression{})
		if err != nil {
			return nil, err
		}
		if _, err := o.Write(f.data); err != nil {
			return nil, err
		}
		if _, err := o.Finish(); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	return made, set.Commit()
}

// copyInto copies the file at path into the set as name and returns its
// SHA-256.
func copyInto(set *outset.Set, path, name string) (string, error) {
	in, err := openreg.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	o, err := release.Create(set, name, release.Compression{})
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Abort()
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return o.Finish()
}

// eachLine calls fn with each line of the gzip file path (without '\n').
func eachLine(ctx context.Context, path string, fn func(line []byte) error) error {
	f, err := openreg.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gunzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	br := bufio.NewReaderSize(zr, 1<<20)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if n%4096 == 0 && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if ferr := fn(bytes.TrimSuffix(line, []byte("\n"))); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", path, n, err)
		}
	}
}

func countEditable(ctx context.Context, path string) (int, error) {
	n := 0
	err := eachLine(ctx, path, func(line []byte) error {
		if r := parseRecord(line); r != nil && len(r.unique) > 0 {
			n++
		}
		return nil
	})
	return n, err
}

// rewrite copies the lines of src to w, editing the chosen editable ones.
func rewrite(ctx context.Context, src string, w io.Writer, chosen map[int]string, rng *rand.Rand) ([]Edit, error) {
	var made []Edit
	editable := 0
	err := eachLine(ctx, src, func(line []byte) error {
		out := line
		if r := parseRecord(line); r != nil && len(r.unique) > 0 {
			if kind, ok := chosen[editable]; ok {
				e, edited := r.edit(kind, rng)
				out = edited
				made = append(made, e)
			}
			editable++
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		_, err := w.Write([]byte{'\n'})
		return err
	})
	return made, err
}

// jmember is one key and raw value of a JSON object, in order.
type jmember struct {
	key string
	val json.RawMessage
}

// members splits a JSON object into its members, or fails.
func members(raw []byte) ([]jmember, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var ms []jmember
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, jmember{t.(string), v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return ms, nil
}

// joinObject writes members back as an object.
func joinObject(ms []jmember) []byte {
	b := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ", "...)
		}
		k, _ := json.Marshal(m.key)
		b = append(append(append(b, k...), ": "...), m.val...)
	}
	return append(b, '}')
}

// loneSurrogate finds a \uD800-\uDFFF escape, which encoding/json reads
// otherwise than CPython.
var loneSurrogate = regexp.MustCompile(`(?i)\\ud[89a-f]`)

// record is an editable line of the servers shape.
type record struct {
	top      []jmember
	toolsAt  int // index of "tools" in top
	serverID string
	tools    []json.RawMessage
	names    []string // each tool's name ("" when not a unique string)
	unique   []int    // the tools whose name is unique on the server
}

// parseRecord reads a line as an editable record, or returns nil.
func parseRecord(line []byte) *record {
	if loneSurrogate.Match(line) || !json.Valid(line) {
		return nil
	}
	top, err := members(line)
	if err != nil {
		return nil
	}
	r := &record{top: top, toolsAt: -1}
	seen := map[string]int{}
	for i, m := range top {
		switch m.key {
		case "tools":
			if r.toolsAt >= 0 || json.Unmarshal(m.val, &r.tools) != nil {
				return nil
			}
			r.toolsAt = i
		case "server_id":
			if r.serverID != "" || json.Unmarshal(m.val, &r.serverID) != nil || r.serverID == "" {
				return nil
			}
		case "server", "server_url", "url", "tool":
			return nil // an alias: the id would be another's to pick
		}
		seen[m.key]++
	}
	if r.toolsAt < 0 || r.serverID == "" || seen["tools"] != 1 || seen["server_id"] != 1 {
		return nil
	}
	count := map[string]int{}
	r.names = make([]string, len(r.tools))
	for i, t := range r.tools {
		// The name as the census reads it: the one "name" key, a
		// string (encoding/json's struct decoding would also take
		// "Name").
		if ms, err := members(t); err == nil && countKey(ms, "name") == 1 {
			for _, m := range ms {
				var name string
				if m.key == "name" && json.Unmarshal(m.val, &name) == nil {
					r.names[i] = name
				}
			}
		}
		count[r.names[i]]++
	}
	for i, n := range r.names {
		if n != "" && count[n] == 1 {
			r.unique = append(r.unique, i)
		}
	}
	return r
}

func countKey(ms []jmember, key string) int {
	n := 0
	for _, m := range ms {
		if m.key == key {
			n++
		}
	}
	return n
}

// edit makes one edit of kind to r and returns it with the new line. A
// kind the chosen tool cannot take (a gain on a tool without a properties
// object) falls back to a change.
func (r *record) edit(kind string, rng *rand.Rand) (Edit, []byte) {
	i := r.unique[rng.IntN(len(r.unique))]
	e := Edit{Kind: kind, ServerID: r.serverID, Tool: r.names[i]}
	tools := slices.Clone(r.tools)
	switch kind {
	case EditAdded:
		name := fmt.Sprintf("next_release_tool_%d", rng.IntN(1e6))
		for slices.Contains(r.names, name) {
			name += "_"
		}
		e.Tool = name
		nk, _ := json.Marshal(name)
		tools = append(tools, json.RawMessage(`{"name": `+string(nk)+`, "description": "Added in the next release.", "inputSchema": {"type": "object", "properties": {"file_path": {"type": "string", "description": "file to read"}}}}`))
	case EditRemoved:
		tools = slices.Delete(tools, i, i+1)
	case EditGained:
		if t, ok := withAPIKey(tools[i]); ok {
			tools[i] = t
			break
		}
		e.Kind = EditChanged
		fallthrough
	case EditChanged:
		ms, _ := members(tools[i])
		ms = append(ms, jmember{"x-next-release", json.RawMessage(fmt.Sprint(1 + rng.IntN(1e6)))})
		tools[i] = joinObject(ms)
	}
	list := []byte{'['}
	for j, t := range tools {
		if j > 0 {
			list = append(list, ", "...)
		}
		list = append(list, t...)
	}
	top := slices.Clone(r.top)
	top[r.toolsAt].val = append(list, ']')
	return e, joinObject(top)
}

// withAPIKey adds an api_key property to a tool whose inputSchema holds a
// properties object without one.
func withAPIKey(tool json.RawMessage) (json.RawMessage, bool) {
	ms, err := members(tool)
	if err != nil || countKey(ms, "inputSchema") != 1 || countKey(ms, "input_schema") != 0 || bytes.Contains(tool, []byte("api_key")) {
		return nil, false
	}
	for i, m := range ms {
		if m.key != "inputSchema" {
			continue
		}
		sm, err := members(m.val)
		if err != nil || countKey(sm, "properties") != 1 {
			return nil, false
		}
		for j, p := range sm {
			if p.key != "properties" {
				continue
			}
			pm, err := members(p.val)
			if err != nil {
				return nil, false
			}
			pm = append(pm, jmember{"api_key", json.RawMessage(`{"type": "string", "description": "API key of the account"}`)})
			sm[j].val = joinObject(pm)
		}
		ms[i].val = joinObject(sm)
	}
	return joinObject(ms), true
}

// ReadEdits reads the edits.json Next wrote into dir.
func ReadEdits(dir string) ([]Edit, error) {
	b, err := openreg.ReadFile(filepath.Join(dir, EditsFile), 64<<20)
	if err != nil {
		return nil, err
	}
	var es []Edit
	if err := json.Unmarshal(b, &es); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, EditsFile), err)
	}
	return es, nil
}
