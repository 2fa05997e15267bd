// Package labelpage serves the labelling page: one sample item at a time
// with its tool's context and the five definitions in view, blind to the
// rules (an item's rule classes and stratum never leave the server), every
// answer appended and fsynced to the rater's labels file at once, so that a
// closed tab or a killed process loses nothing and the page resumes.
package labelpage

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sync"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
)

//go:embed page.html
var pageHTML []byte

// blindItem is what the page is shown of an item: no rule, no stratum.
type blindItem struct {
	ID              int    `json:"id"`
	Server          string `json:"server"`
	Tool            string `json:"tool"`
	ToolDescription string `json:"tool_description"`
	Property        string `json:"property,omitempty"`
	Description     string `json:"description,omitempty"`
}

// definition is one class as the page lists it.
type definition struct {
	Class, Text string
}

// Server is one rater's labelling session on one sample.
type Server struct {
	// Host, when set, is the only Host header served (the listener's
	// address): a page of another site that a DNS rebinding points at
	// loopback then reaches nothing.
	Host string

	rater string
	unit  string
	items []blindItem
	known map[int]bool

	mu      sync.Mutex
	f       *os.File // the labels file, opened for appending
	answers map[int]sample.Label
}

// New opens (or creates) path, the rater's labels file, and reads the
// answers it holds so that the session resumes where it stopped.
func New(s *sample.Sample, rater, path string) (*Server, error) {
	srv := &Server{rater: rater, unit: s.Strata.Unit, known: map[int]bool{}, answers: map[int]sample.Label{}}
	for _, it := range s.Items {
		srv.items = append(srv.items, blindItem{ID: it.ID, Server: it.Server, Tool: it.Tool, ToolDescription: it.ToolDescription,
			Property: it.Property, Description: it.Description})
		srv.known[it.ID] = true
	}
	prev, err := sample.ReadLabels(path, srv.known)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		srv.answers = prev.Labels
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	srv.f = f
	return srv, nil
}

// Close closes the labels file.
func (s *Server) Close() error { return s.f.Close() }

// Answered is how many items have an answer.
func (s *Server) Answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.answers)
}

// ServeHTTP serves the page (GET /), the session (GET /state) and the
// answers (POST /answer, one Label as JSON).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.Host != "" && r.Host != s.Host {
		http.Error(w, "unknown host", http.StatusForbidden)
		return
	}
	switch {
	case r.URL.Path == "/" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
		w.Write(pageHTML)
	case r.URL.Path == "/state" && r.Method == http.MethodGet:
		s.mu.Lock()
		var defs []definition
		for _, c := range sample.Classes {
			defs = append(defs, definition{c, sample.Definitions[c]})
		}
		b, err := json.Marshal(struct {
			Rater       string               `json:"rater"`
			Unit        string               `json:"unit"`
			Definitions []definition         `json:"definitions"`
			Items       []blindItem          `json:"items"`
			Answers     map[int]sample.Label `json:"answers"`
		}{s.rater, s.unit, defs, s.items, s.answers})
		s.mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(b)
	case r.URL.Path == "/answer" && r.Method == http.MethodPost:
		// A page on another origin cannot post here: a cross-site form
		// sends no JSON content type without a preflight we never allow.
		if r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want application/json", http.StatusUnsupportedMediaType)
			return
		}
		var l sample.Label
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.save(l); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// save appends l as one line and fsyncs it before the answer counts.
func (s *Server) save(l sample.Label) error {
	if !s.known[l.ID] {
		return fmt.Errorf("id %d is not in the sample", l.ID)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	b = append(bytes.TrimSpace(b), '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Write(b); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return err
	}
	s.answers[l.ID] = l
	return nil
}
