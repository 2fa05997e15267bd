package census

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
)

// outLine is what a decoder made of one line, in a form both Go and the
// Python driver (testdata/pyref.py) print: strings as hex of their WTF-8
// bytes, so that lone surrogates and invalid-looking bytes compare exactly.
type outLine struct {
	Blank bool      `json:"blank,omitempty"`
	Err   string    `json:"err,omitempty"` // "syntax" or "record"
	Msg   string    `json:"msg,omitempty"` // the BadRecord text
	Shape string    `json:"shape,omitempty"`
	SID   *string   `json:"sid,omitempty"`
	Tools []outTool `json:"tools,omitempty"`
}

type outTool struct {
	Name  *string   `json:"name"`
	Desc  *string   `json:"desc"`
	Props []outProp `json:"props"`
}

type outProp struct {
	N string `json:"n"`
	D string `json:"d"`
	R bool   `json:"r"`
	W string `json:"w"`
}

func hexp(b []byte, ok bool) *string {
	if !ok {
		return nil
	}
	s := hex.EncodeToString(b)
	return &s
}

// toOut renders a decoder's answer for a line; blank lines are not decoded,
// as the reference skips them.
func toOut(line []byte, decode func([]byte) (*Record, error)) outLine {
	if IsBlank(line) {
		return outLine{Blank: true}
	}
	rec, err := decode(line)
	var se *SyntaxError
	var re *RecordError
	switch {
	case errors.As(err, &se):
		return outLine{Err: "syntax"}
	case errors.As(err, &re):
		return outLine{Err: "record", Msg: re.Msg}
	case err != nil:
		return outLine{Err: "unexpected error type " + fmt.Sprintf("%T", err)}
	}
	o := outLine{Shape: rec.Shape.String(), SID: hexp(rec.ServerID, rec.HasServerID), Tools: []outTool{}}
	for _, t := range rec.Tools {
		ot := outTool{Name: hexp(t.Name, t.HasName), Desc: hexp(t.Description, t.HasDescription), Props: []outProp{}}
		for i := range t.Properties {
			p := &t.Properties[i]
			ot.Props = append(ot.Props, outProp{
				N: hex.EncodeToString(p.Name),
				D: hex.EncodeToString(p.Description),
				R: p.Required,
				W: hex.EncodeToString([]byte(p.WhereString())),
			})
		}
		o.Tools = append(o.Tools, ot)
	}
	return o
}

// diffRecords describes the first difference between two decoded lines
// (errors included, compared by type, offset and message), or returns "".
func diffRecords(a *Record, aerr error, b *Record, berr error) string {
	if aerr != nil || berr != nil {
		if aerr == nil || berr == nil {
			return fmt.Sprintf("error %v vs %v", aerr, berr)
		}
		if fmt.Sprintf("%T %v", aerr, aerr) != fmt.Sprintf("%T %v", berr, berr) {
			return fmt.Sprintf("error %T %q vs %T %q", aerr, aerr, berr, berr)
		}
		return ""
	}
	if a.Shape != b.Shape {
		return fmt.Sprintf("shape %v vs %v", a.Shape, b.Shape)
	}
	if a.HasServerID != b.HasServerID || !bytes.Equal(a.ServerID, b.ServerID) {
		return fmt.Sprintf("server id %q/%v vs %q/%v", a.ServerID, a.HasServerID, b.ServerID, b.HasServerID)
	}
	if len(a.Tools) != len(b.Tools) {
		return fmt.Sprintf("%d tools vs %d", len(a.Tools), len(b.Tools))
	}
	for i := range a.Tools {
		ta, tb := &a.Tools[i], &b.Tools[i]
		if ta.HasName != tb.HasName || !bytes.Equal(ta.Name, tb.Name) {
			return fmt.Sprintf("tool %d name %q/%v vs %q/%v", i, ta.Name, ta.HasName, tb.Name, tb.HasName)
		}
		if ta.HasDescription != tb.HasDescription || !bytes.Equal(ta.Description, tb.Description) {
			return fmt.Sprintf("tool %d description %q/%v vs %q/%v", i, ta.Description, ta.HasDescription, tb.Description, tb.HasDescription)
		}
		if !bytes.Equal(ta.Schema, tb.Schema) || (ta.Schema == nil) != (tb.Schema == nil) {
			return fmt.Sprintf("tool %d schema text %q vs %q", i, ta.Schema, tb.Schema)
		}
		if !bytes.Equal(ta.Raw, tb.Raw) || (ta.Raw == nil) != (tb.Raw == nil) {
			return fmt.Sprintf("tool %d raw text %q vs %q", i, ta.Raw, tb.Raw)
		}
		if len(ta.Properties) != len(tb.Properties) {
			return fmt.Sprintf("tool %d: %d properties vs %d", i, len(ta.Properties), len(tb.Properties))
		}
		for j := range ta.Properties {
			pa, pb := &ta.Properties[j], &tb.Properties[j]
			if !bytes.Equal(pa.Name, pb.Name) || !bytes.Equal(pa.Description, pb.Description) ||
				pa.Required != pb.Required || pa.Where != pb.Where || !bytes.Equal(pa.DefKey, pb.DefKey) {
				return fmt.Sprintf("tool %d property %d: %+v vs %+v", i, j, *pa, *pb)
			}
		}
	}
	return ""
}
