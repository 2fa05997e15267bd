package census

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

// streamDecode gathers what Stream and Next yield for a line into a Record
// of its own (Next reuses its memory), taking two passes whatever the line's
// length when twoPass is set, so that short test lines exercise the path
// long lines take.
func streamDecode(d *Decoder, line []byte, twoPass bool) (*Record, error) {
	rec, err := d.stream(line, twoPass)
	if err != nil {
		return nil, err
	}
	if rec.Tools != nil {
		return nil, errors.New("Stream returned tools in the record")
	}
	out := &Record{Shape: rec.Shape, ServerID: bytes.Clone(rec.ServerID), HasServerID: rec.HasServerID, Tools: []Tool{}}
	for {
		t, err := d.Next()
		if err != nil {
			return nil, err
		}
		if t == nil {
			break
		}
		c := Tool{Name: bytes.Clone(t.Name), HasName: t.HasName, Description: bytes.Clone(t.Description), HasDescription: t.HasDescription, Schema: bytes.Clone(t.Schema), Raw: bytes.Clone(t.Raw), Offset: t.Offset, Text: t.Text}
		for _, p := range t.Properties {
			p.Name, p.Description, p.DefKey = bytes.Clone(p.Name), bytes.Clone(p.Description), bytes.Clone(p.DefKey)
			c.Properties = append(c.Properties, p)
		}
		out.Tools = append(out.Tools, c)
	}
	if t, err := d.Next(); t != nil || err != nil {
		return nil, fmt.Errorf("Next after the end gave %v, %v", t, err)
	}
	return out, nil
}

// streamer returns a decode function over one shared Decoder, for toOut.
func streamer(twoPass bool) func([]byte) (*Record, error) {
	d := NewDecoder()
	return func(line []byte) (*Record, error) { return streamDecode(d, line, twoPass) }
}

// streamCases are lines whose answer is only known at their end: the
// winning tools list, server id or schema comes late, or the line fails at
// its last bytes after many valid tools.
func streamCases() []trickyCase {
	tools := func(n int, name string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"name":"%s%d","inputSchema":{"properties":{"path":{"description":"file path"},"n":{}},"required":["path"]}}`, name, i)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	many := tools(300, "t")
	return []trickyCase{
		{"later tools list wins", `{"server_id":"a","tools":` + many + `,"tools":` + tools(2, "late") + `}`, "ok"},
		{"later tools not a list", `{"tools":` + many + `,"tools":{"name":"x"}}`, "record"},
		{"later tools with a bad element", `{"tools":` + many + `,"tools":[{},{},7,{}]}`, "record"},
		{"bad element then good list", `{"tools":[1],"tools":` + many + `}`, "ok"},
		{"bad element last", `{"tools":` + many[:len(many)-1] + `,"x"]}`, "record"},
		{"later server id", `{"server_id":"first","tools":` + many + `,"server_id":"last"}`, "ok"},
		{"later server id not usable", `{"server_id":"first","url":"u","tools":` + many + `,"server_id":1.5}`, "ok"},
		{"escaped server id", `{"tools":` + many + `,"server":"\u00e9\ud800"}`, "ok"},
		{"invalid at the last byte", `{"tools":` + many + `]`, "syntax"},
		{"extra data at the end", `{"tools":` + many + `} x`, "syntax"},
		{"unclosed record", `{"tools":` + many, "syntax"},
		{"control character late", `{"tools":` + many + `,"z":"a` + "\x01" + `"}`, "syntax"},
		{"invalid UTF-8 after a syntax error", `{"tools":` + many + `,]` + "\xff" + `}`, "syntax"},
		{"too deep late", `{"tools":` + many + `,"z":` + nest("[", "]", 1000, "") + `}`, "syntax"},
		{"deep but valid late", `{"tools":` + many + `,"z":` + nest("[", "]", 900, "") + `}`, "ok"},
		{"tools then a later tool", `{"tools":` + many + `,"tool":5}`, "ok"},
		{"tool shape, later tool wins", `{"tool":{"name":"a","inputSchema":{"properties":{"x":{}}}},"tool":{"name":"b","inputSchema":{"properties":{"y":{}}}}}`, "ok"},
		{"tool shape, later tool not an object", `{"tool":{"name":"a"},"tool":[]}`, "record"},
		{"tool shape, empty", `{"tool":{}}`, "ok"},
		{"flat, later schema wins", `{"name":"f","inputSchema":{"properties":{"a":{}}},"inputSchema":{"properties":{"b":{}}}}`, "ok"},
		{"flat, null schema falls back", `{"name":"f","inputSchema":{"properties":{"a":{}}},"input_schema":{"properties":{"c":{}}},"inputSchema":null}`, "ok"},
		{"flat, schema not an object", `{"inputSchema":[1],"input_schema":{"properties":{"c":{}}}}`, "ok"},
		{"flat, escaped name", `{"name":"\u0041\ud83d\ude00","description":"d\n","input_schema":{"properties":{"p":{}},"$defs":{"D":{"properties":{"q":{}}}}}}`, "ok"},
		{"flat, with tools ignored", `{"name":"f","inputSchema":{"properties":{"a":{}}},"tools":[{"name":"g"}]}`, "ok"},
		{"one tool per line", `{"server":"s","tool":` + tools(1, "only")[1:len(tools(1, "only"))-1] + `}`, "ok"},
		{"empty tools", `{"tools":[ ]}`, "ok"},
		{"not an object", `[{"tools":[]}]`, "record"},
	}
}

// TestStreamMatchesDecode: whatever the line, Stream and Next give what
// Decode gives, errors included, in one pass and in two, with one Decoder
// kept across lines; and both give what ReferenceDecode gives.
func TestStreamMatchesDecode(t *testing.T) {
	var lines [][]byte
	var names []string
	for _, c := range append(trickyCases(), streamCases()...) {
		lines, names = append(lines, []byte(c.line)), append(names, c.name)
	}
	for i, l := range realcorpus.Lines(t) {
		lines, names = append(lines, l), append(names, fmt.Sprintf("real corpus line %d", i+1))
	}
	for i, l := range censusLines(50) {
		lines, names = append(lines, l), append(names, fmt.Sprintf("census line %d", i+1))
	}
	d, s1, s2 := NewDecoder(), NewDecoder(), NewDecoder()
	for i, line := range lines {
		want, werr := ReferenceDecode(line)
		got, err := d.Decode(line)
		if diff := diffRecords(got, err, want, werr); diff != "" {
			t.Errorf("%s: Decode: %s", names[i], diff)
		}
		for _, s := range []struct {
			d       *Decoder
			twoPass bool
		}{{s1, false}, {s2, true}} {
			got, err := streamDecode(s.d, line, s.twoPass)
			if diff := diffRecords(got, err, want, werr); diff != "" {
				t.Errorf("%s: Stream (two passes %v): %s", names[i], s.twoPass, diff)
			}
		}
	}
}

// TestStreamCases pins the outcome of each streaming case, so that a bug the
// decoders share would still show.
func TestStreamCases(t *testing.T) {
	d := NewDecoder()
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			rec, err := streamDecode(d, []byte(c.line), true)
			var se *SyntaxError
			var re *RecordError
			got := "ok"
			switch {
			case errors.As(err, &se):
				got = "syntax"
			case errors.As(err, &re):
				got = "record"
			case err != nil:
				t.Fatalf("error of type %T: %v", err, err)
			}
			if got != c.want {
				t.Fatalf("got %s (%v), want %s", got, err, c.want)
			}
			if rec == nil {
				return
			}
			switch c.name {
			case "later tools list wins":
				if len(rec.Tools) != 2 || string(rec.Tools[1].Name) != "late1" || string(rec.ServerID) != "a" {
					t.Errorf("got %d tools, last %q, server %q", len(rec.Tools), rec.Tools[len(rec.Tools)-1].Name, rec.ServerID)
				}
			case "later server id":
				if string(rec.ServerID) != "last" || len(rec.Tools) != 300 {
					t.Errorf("server %q, %d tools", rec.ServerID, len(rec.Tools))
				}
			case "later server id not usable":
				if string(rec.ServerID) != "u" {
					t.Errorf("server %q, want the url", rec.ServerID)
				}
			case "flat, null schema falls back":
				if len(rec.Tools) != 1 || len(rec.Tools[0].Properties) != 1 || string(rec.Tools[0].Properties[0].Name) != "c" {
					t.Errorf("got %+v", rec.Tools)
				}
			}
		})
	}
}

// TestStreamGiantLine streams a 64 MiB server line: the same tools as
// Decode, while the decoder's memory stays that of one tool; and a line
// corrupt at its last byte gives Decode's error and no tool.
func TestStreamGiantLine(t *testing.T) {
	const size = 64 << 20
	line, tools := bigLine(size)
	d := NewDecoder()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rec, err := d.Stream(line)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Shape != ShapeServer || string(rec.ServerID) != "big" {
		t.Fatalf("record %v %q", rec.Shape, rec.ServerID)
	}
	n := 0
	for {
		tool, err := d.Next()
		if err != nil {
			t.Fatal(err)
		}
		if tool == nil {
			break
		}
		if want := fmt.Sprintf("tool_%d", n); string(tool.Name) != want || len(tool.Properties) != 4 ||
			!tool.Properties[0].Required || tool.Properties[3].WhereString() != "$defs/D" {
			t.Fatalf("tool %d: %q %+v", n, tool.Name, tool.Properties)
		}
		n++
	}
	runtime.ReadMemStats(&after)
	if n != tools {
		t.Fatalf("%d tools streamed, want %d", n, tools)
	}
	// Decode of this line allocates several times its size; two passes, a
	// few KiB. (Under the race detector, whose pools drop what they hold,
	// the bound is the plain build's to hold.)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 && !raceEnabled {
		t.Errorf("streaming a %d-byte line allocated %d bytes", len(line), alloc)
	}
	if cap(d.out) > 64 || cap(d.tools) > 4 {
		t.Errorf("arenas of more than one tool: out %d, tools %d", cap(d.out), cap(d.tools))
	}

	bad := bytes.Clone(line)
	bad[len(bad)-1] = ']'
	_, derr := NewDecoder().Decode(bad)
	_, serr := d.Stream(bad)
	var se *SyntaxError
	if !errors.As(serr, &se) || se.Offset != len(bad)-1 || fmt.Sprint(serr) != fmt.Sprint(derr) {
		t.Fatalf("corrupt last byte: Stream %v, Decode %v", serr, derr)
	}
	if tool, err := d.Next(); tool != nil || err != nil {
		t.Fatalf("Next after a failed Stream: %v %v", tool, err)
	}
}

// TestStreamZeroAllocs: once warmed up, Stream and Next allocate nothing
// per line, in one pass or two.
func TestStreamZeroAllocs(t *testing.T) {
	lines := append(realcorpus.Lines(t), censusLines(20)...)
	for _, twoPass := range []bool{false, true} {
		d := NewDecoder()
		pass := func() {
			for _, l := range lines {
				if _, err := d.stream(l, twoPass); err != nil {
					t.Fatal(err)
				}
				for {
					tool, err := d.Next()
					if err != nil {
						t.Fatal(err)
					}
					if tool == nil {
						break
					}
				}
			}
		}
		pass()
		if allocs := testing.AllocsPerRun(3, pass); allocs != 0 {
			t.Errorf("two passes %v: %v allocations per pass over %d lines, want 0", twoPass, allocs, len(lines))
		}
	}
}

// TestStreamThreshold: Stream takes two passes from streamAbove on, which
// shows in the decoder keeping no more than one tool.
func TestStreamThreshold(t *testing.T) {
	for _, size := range []int{streamAbove / 2, streamAbove} {
		line, tools := bigLine(size)
		if (len(line) >= streamAbove) != (size == streamAbove) {
			t.Fatalf("line of %d bytes for size %d", len(line), size)
		}
		d := NewDecoder()
		if _, err := d.Stream(line); err != nil {
			t.Fatal(err)
		}
		if got := d.st.twoPass; got != (len(line) >= streamAbove) {
			t.Errorf("line of %d bytes: two passes %v", len(line), got)
		}
		n := 0
		for tool, err := d.Next(); tool != nil || err != nil; tool, err = d.Next() {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != tools {
			t.Errorf("line of %d bytes: %d tools, want %d", len(line), n, tools)
		}
	}
}

// BenchmarkStream measures Stream with Next against Decode on the same
// lines: census lines (one pass below streamAbove, and forced two passes,
// which is the price of streaming) and one 16 MiB server line.
func BenchmarkStream(b *testing.B) {
	giant, _ := bigLine(16 << 20)
	inputs := map[string][][]byte{"census": censusLines(300), "giant": {giant}}
	for _, name := range []string{"census", "giant"} {
		lines := inputs[name]
		for _, mode := range []string{"decode", "stream", "two-pass"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				d := NewDecoder()
				b.SetBytes(totalBytes(lines))
				b.ReportAllocs()
				for b.Loop() {
					for _, l := range lines {
						if mode == "decode" {
							if _, err := d.Decode(l); err != nil {
								b.Fatal(err)
							}
							continue
						}
						if _, err := d.stream(l, mode == "two-pass" || len(l) >= streamAbove); err != nil {
							b.Fatal(err)
						}
						for {
							t, err := d.Next()
							if err != nil {
								b.Fatal(err)
							}
							if t == nil {
								break
							}
						}
					}
				}
			})
		}
	}
}
