package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/report/sarif"
	"mime"
	"net/http"
	"strconv"

	"github.com/atlas-reproduce/atlas-reproduce/label"
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

// holdAnswer is how much of a /v1/classify answer is held before the
// status is committed: an answer that fits is sent whole with its
// Content-Length, as it always was; a longer one is streamed as it is
// produced, once the rest of the body is known to be good.
const holdAnswer = 1 << 20

// classify answers POST /v1/classify: {"tools": [...]}, each entry the
// object classify prints for the tool, in input order; or SARIF 2.1.0 with
// ?format=sarif.
func (s *Server) classify(w http.ResponseWriter, r *http.Request) {
	format := ""
	if r.URL.RawQuery != "" { // most requests have none: skip parsing one
		format = r.URL.Query().Get("format")
	}
	if format != "" && format != "json" && format != "sarif" {
		s.fail(w, r, &httpError{http.StatusBadRequest, fmt.Sprintf("format %q: want json or sarif", format)})
		return
	}
	body, done, ok := s.admittedBody(w, r)
	if !ok {
		return
	}
	defer done()
	turn, err := s.labelTurn(r.Context(), body)
	if err != nil {
		return // the client went away
	}
	defer turn()
	jsonLines := isJSONLines(r.Header.Get("Content-Type"))
	if format == "sarif" {
		s.classifySARIF(w, body, jsonLines)
		return
	}

	op := s.bufs.Get().(*[]byte)
	a := &answer{w: w, buf: (*op)[:0], check: func() error { return s.check(body, jsonLines) }}
	defer func() { *op = a.buf; s.putBuf(op) }() // after the last write of a.buf
	err = s.label(body, jsonLines, a.tool)
	var cf *checkFailed
	if errors.As(err, &cf) {
		err = cf.err
	}
	switch {
	case err != nil && !a.committed:
		writeError(w, errorStatus(err), decodeError(err))
	case err != nil:
		// Only a failed write can stop a committed answer (check has
		// found the body good): the client is gone.
	default:
		a.finish()
	}
}

// answer writes a /v1/classify JSON answer as its tools are labelled. It
// holds up to holdAnswer bytes before committing the status; check runs
// once, before the first commit, so that an error anywhere in the body (a
// bad later line, too many tools) is still answered with its status.
type answer struct {
	w         http.ResponseWriter
	buf       []byte
	tools     int
	committed bool
	check     func() error
}

func (a *answer) tool(t *label.ToolLabels) error {
	if a.tools == 0 {
		a.buf = append(a.buf, `{"tools": [`...)
	} else {
		a.buf = append(a.buf, ", "...)
	}
	a.tools++
	var err error
	a.buf, err = appendTool(a.buf, t, a.flush)
	return err
}

// flush commits the answer (after check) once buf holds holdAnswer bytes,
// writes buf and returns it emptied.
func (a *answer) flush(buf []byte) ([]byte, error) {
	if len(buf) < holdAnswer {
		return buf, nil
	}
	if !a.committed {
		if err := a.check(); err != nil {
			return buf, &checkFailed{err}
		}
		h := a.w.Header()
		h["Content-Type"] = jsonType
		a.w.WriteHeader(http.StatusOK)
		a.committed = true
	}
	_, err := a.w.Write(buf)
	return buf[:0], err
}

// propsChunk is how many properties of a tool are encoded at a time: a
// tool of a million properties is written in pieces, not built whole.
const propsChunk = 4096

// propsKey opens a tool's property list in label.ToolLabels.AppendJSON.
var propsKey = []byte(`"properties": [`)

// appendTool appends t's JSON object as AppendJSON writes it (without its
// newline) to buf, calling flush after the tool's head and after each
// chunk of its properties, so that flush can bound or write out what is
// held. The pieces come from AppendJSON itself, which stays the one
// encoder of the format.
func appendTool(buf []byte, t *label.ToolLabels, flush func([]byte) ([]byte, error)) ([]byte, error) {
	if len(t.Properties) <= propsChunk || t.Sensitivity != nil {
		buf = t.AppendJSON(buf)
		return flush(buf[:len(buf)-1]) // AppendJSON ends the line
	}
	props := t.Properties
	head := *t
	head.Properties = nil
	buf = head.AppendJSON(buf)
	buf = buf[:len(buf)-len("]}\n")] // open at the property list
	var scratch []byte
	for i := 0; i < len(props); i += propsChunk {
		var err error
		if buf, err = flush(buf); err != nil {
			return buf, err
		}
		chunk := label.ToolLabels{Properties: props[i:min(i+propsChunk, len(props))]}
		scratch = chunk.AppendJSON(scratch[:0])
		items := scratch[bytes.Index(scratch, propsKey)+len(propsKey) : len(scratch)-len("]}\n")]
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = append(buf, items...)
	}
	return flush(append(buf, "]}"...))
}

func (a *answer) finish() {
	if a.tools == 0 {
		a.buf = append(a.buf, `{"tools": [`...)
	}
	a.buf = append(a.buf, "]}\n"...)
	if !a.committed {
		h := a.w.Header() // set directly, keys canonical already: this is the hot path
		h["Content-Type"] = jsonType
		h["Content-Length"] = []string{strconv.Itoa(len(a.buf))}
	}
	a.w.Write(a.buf)
}

// checkFailed carries the error check found out of the labelling that
// called it. It has no Unwrap on purpose: the labeller would take a
// decoding error inside for its own and wrap it with its own line.
type checkFailed struct{ err error }

func (c *checkFailed) Error() string { return c.err.Error() }

// errTooManyTools is the error of a request over MaxTools.
type errTooManyTools struct{ max int }

func (e *errTooManyTools) Error() string {
	return fmt.Sprintf("the request holds more than %d tools, the server's limit (--max-tools); send them in smaller requests", e.max)
}

func errorStatus(err error) int {
	var tm *errTooManyTools
	if errors.As(err, &tm) {
		return http.StatusRequestEntityTooLarge
	}
	var he *httpError
	if errors.As(err, &he) {
		return he.code
	}
	return http.StatusBadRequest
}

// labelTurn waits until body may be labelled (see Server.labelling) and
// returns the function that ends its turn.
func (s *Server) labelTurn(ctx context.Context, body []byte) (func(), error) {
	n := min(max(int64(len(body)), 1), s.cfg.MaxBody)
	if err := s.labelling.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { s.labelling.Release(n) }, nil
}

// label calls emit for each tool of body, in order, counting tools and
// properties in the metrics once all succeeded. More than MaxTools tools
// stop it with *errTooManyTools.
func (s *Server) label(body []byte, jsonLines bool, emit func(*label.ToolLabels) error) error {
	tools, props := 0, 0
	count := func(t *label.ToolLabels) error {
		if tools == s.cfg.MaxTools {
			return &errTooManyTools{s.cfg.MaxTools}
		}
		tools, props = tools+1, props+len(t.Properties)
		return emit(t)
	}
	err := s.walk(body, jsonLines, func(_ label.Origin, t *label.ToolLabels) error { return count(t) })
	if err == nil {
		s.metrics.classified(tools, props)
	}
	return err
}

// walk runs a pooled labeller over body.
func (s *Server) walk(body []byte, jsonLines bool, emit func(label.Origin, *label.ToolLabels) error) error {
	l := s.labellers.Get().(*label.Labeller)
	if len(body) < reclaimAbove {
		// A large body leaves its labeller holding arenas of its size:
		// that one is left to the collector instead of the pool.
		defer s.labellers.Put(l)
	}
	if jsonLines {
		return l.ClassifyLines(body, sarifArtifact, emit)
	}
	o := label.Origin{File: sarifArtifact, Line: 1}
	return l.ClassifyBody(body, func(t *label.ToolLabels) error { return emit(o, t) })
}

// check reads the whole body as label does, without answering: nil when
// it would label to the end within MaxTools. A single document is checked
// whole before its first tool is labelled, so only its count is in doubt,
// and not at all when it is too short to hold more than MaxTools tools
// ("{}," is the least a tool takes).
func (s *Server) check(body []byte, jsonLines bool) error {
	if !jsonLines && int64(len(body)) < 3*int64(s.cfg.MaxTools) {
		return nil
	}
	tools := 0
	return s.walk(body, jsonLines, func(label.Origin, *label.ToolLabels) error {
		if tools++; tools > s.cfg.MaxTools {
			return &errTooManyTools{s.cfg.MaxTools}
		}
		return nil
	})
}

// maxSARIFResults bounds the results of one SARIF answer, which is built
// whole (a SARIF log is one JSON document): at about a kilobyte each, ten
// thousand keep the answer near ten megabytes.
const maxSARIFResults = 10_000

// classifySARIF answers with the SARIF log of body's labels.
func (s *Server) classifySARIF(w http.ResponseWriter, body []byte, jsonLines bool) {
	sw := sarif.NewWriter()
	results := 0
	tools, props := 0, 0
	err := s.walk(body, jsonLines, func(o label.Origin, t *label.ToolLabels) error {
		if tools == s.cfg.MaxTools {
			return &errTooManyTools{s.cfg.MaxTools}
		}
		tools, props = tools+1, props+len(t.Properties)
		for i := range t.Properties {
			results += len(t.Properties[i].Classes)
		}
		if results > maxSARIFResults {
			return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the SARIF answer would hold more than %d results; ask for the JSON answer, or send the tools in smaller requests", maxSARIFResults)}
		}
		sw.Add(o, t)
		return nil
	})
	if err != nil {
		writeError(w, errorStatus(err), decodeError(err))
		return
	}
	s.metrics.classified(tools, props)
	var buf bytes.Buffer
	if _, err := sw.WriteTo(&buf); err != nil {
		writeError(w, http.StatusInternalServerError, apiError{Error: err.Error()})
		return
	}
	h := w.Header()
	h["Content-Type"] = sarifType
	h["Content-Length"] = []string{strconv.Itoa(buf.Len())}
	w.Write(buf.Bytes())
}

// decodeError turns a labelling error into the client's answer, keeping the
// decoder's message and position.
func decodeError(err error) apiError {
	e := apiError{Error: err.Error()}
	var de *label.DecodeError
	if !errors.As(err, &de) {
		return e
	}
	e.Error = de.Err.Error()
	if de.Line > 0 {
		e.Line = de.Line
		e.Error = fmt.Sprintf("line %d: %v", de.Line, de.Err)
	}
	if de.Offset >= 0 {
		off := de.Offset
		e.Offset = &off
	}
	return e
}
