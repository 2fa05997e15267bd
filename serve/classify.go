package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"

	"github.com/atlas-reproduce/atlas-reproduce/census"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// sarifArtifact names the request body in SARIF locations, where classify
// names its input file or "stdin".
const sarifArtifact = "request"

// Content-Type values, shared: net/http only reads them.
var (
	jsonType  = []string{"application/json"}
	sarifType = []string{"application/sarif+json"}
)

// apiError is the body of every error answer. Line and Offset locate a
// decoding error: Line is the JSON Lines line (absent for a single
// document), Offset the byte in that line or document.
type apiError struct {
	Error  string `json:"error"`
	Line   int64  `json:"line,omitempty"`
	Offset *int   `json:"offset,omitempty"`
}

func writeError(w http.ResponseWriter, code int, e apiError) {
	b, _ := json.Marshal(e)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// isJSONLines reports whether the Content-Type announces JSON Lines. Any
// other type is read as one JSON document, so that curl -d (which sends
// application/x-www-form-urlencoded) works as expected.
func isJSONLines(contentType string) bool {
	switch contentType {
	case "", "application/json":
		return false
	case "application/x-ndjson":
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch mt {
	case "application/x-ndjson", "application/jsonl", "application/x-jsonlines":
		return true
	}
	return false
}

// classify answers POST /v1/classify: {"tools": [...]}, each entry the
// object classify prints for the tool, in input order; or SARIF 2.1.0 with
// ?format=sarif.
func (s *Server) classify(w http.ResponseWriter, r *http.Request) {
	format := ""
	if r.URL.RawQuery != "" { // most requests have none: skip parsing one
		format = r.URL.Query().Get("format")
	}
	if format != "" && format != "json" && format != "sarif" {
		writeError(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("format %q: want json or sarif", format)})
		return
	}
	body, done, ok := s.admittedBody(w, r)
	if !ok {
		return
	}
	defer done()

	op := s.bufs.Get().(*[]byte)
	defer s.putBuf(op)
	out, err := s.label((*op)[:0], body, isJSONLines(r.Header.Get("Content-Type")), format == "sarif")
	*op = out
	if err != nil {
		writeError(w, http.StatusBadRequest, decodeError(err))
		return
	}
	h := w.Header() // set directly, keys canonical already: this is the hot path
	h["Content-Type"] = jsonType
	if format == "sarif" {
		h["Content-Type"] = sarifType
	}
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	w.Write(out)
}

// label appends the answer for body to out: the {"tools": [...]} object,
// or the SARIF log. Tools and properties are counted once all succeeded.
func (s *Server) label(out, body []byte, jsonLines, sarif bool) ([]byte, error) {
	var sw *report.SARIFWriter
	tools, props := 0, 0
	emit := func(o label.Origin, t *label.ToolLabels) error {
		tools, props = tools+1, props+len(t.Properties)
		if sw != nil {
			sw.Add(o, t)
			return nil
		}
		if tools > 1 {
			out = append(out, ", "...)
		}
		out = t.AppendJSON(out)
		out = out[:len(out)-1] // AppendJSON ends the line
		return nil
	}
	if sarif {
		sw = report.NewSARIFWriter(s.cfg.Version)
	} else {
		out = append(out, `{"tools": [`...)
	}
	l := s.labellers.Get().(*label.Labeller)
	var err error
	if jsonLines {
		err = l.ClassifyLines(body, sarifArtifact, emit)
	} else {
		o := label.Origin{File: sarifArtifact, Line: 1}
		err = l.ClassifyBody(body, func(t *label.ToolLabels) error { return emit(o, t) })
	}
	s.labellers.Put(l)
	if err != nil {
		return out, err
	}
	s.metrics.classified(tools, props)
	if sw == nil {
		return append(out, "]}\n"...), nil
	}
	buf := bytes.NewBuffer(out)
	_, err = sw.WriteTo(buf)
	return buf.Bytes(), err
}

// readBody reads the request body into buf, at most MaxBody bytes. A body
// announced or found to be larger is refused with 413 and not read further
// (MaxBytesReader also makes the server close the connection).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, buf []byte) ([]byte, int, error) {
	limit := s.cfg.MaxBody
	if r.ContentLength > limit {
		return buf, http.StatusRequestEntityTooLarge, fmt.Errorf("request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, limit)
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	// Room for the announced body (+1 to see EOF without growing), but
	// not more than a megabyte before the bytes arrive: a client must not
	// make the server allocate for a body it does not send.
	if want := min(r.ContentLength+1, 1<<20); r.ContentLength > 0 && int64(cap(buf)) < want {
		buf = make([]byte, 0, want)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, 0, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				return buf, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds the limit of %d bytes", mbe.Limit)
			case errors.Is(err, os.ErrDeadlineExceeded):
				return buf, http.StatusRequestTimeout, errors.New("request body not received in time")
			}
			return buf, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err)
		}
	}
}

// putBuf returns a buffer to the pool unless one huge request grew it: the
// pool must not pin megabytes per connection after a burst of batches.
func (s *Server) putBuf(bp *[]byte) {
	if cap(*bp) > 4<<20 {
		return
	}
	*bp = (*bp)[:0]
	s.bufs.Put(bp)
}

// decodeError turns a labelling error into the client's answer, keeping the
// decoder's message and position.
func decodeError(err error) apiError {
	e := apiError{Error: err.Error()}
	var le *label.LineError
	if errors.As(err, &le) {
		e.Line = le.Line
		err = le.Err
		e.Error = fmt.Sprintf("line %d: %v", le.Line, err)
	}
	var se *census.SyntaxError
	if errors.As(err, &se) {
		off := se.Offset
		e.Offset = &off
	}
	return e
}
