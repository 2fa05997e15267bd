package httpserve

import "net/http"

// StatusWriter records the status code of an answer (0 until the handler
// writes one): serve counts its requests by code, and the proxy ends a
// session whose initialize was refused. Unwrap lets
// http.ResponseController reach the connection's flusher and deadlines
// (the MCP transport flushes its event streams through it).
type StatusWriter struct {
	http.ResponseWriter
	Code int
}

// WriteHeader records the first code written and passes it on.
func (w *StatusWriter) WriteHeader(code int) {
	if w.Code == 0 {
		w.Code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records 200 when nothing was written before, as net/http sends.
func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Code == 0 {
		w.Code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes the underlying writer when it can.
func (w *StatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
