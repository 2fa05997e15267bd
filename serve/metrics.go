package serve

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/atlas-reproduce/atlas-reproduce/internal/httpserve"
	"github.com/atlas-reproduce/atlas-reproduce/internal/promreg"
)

// metrics are one server's Prometheus collectors, on a registry of its own.
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	tools      prometheus.Counter
	properties prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		requests: promreg.CounterVec("atlas_serve_requests_total",
			"HTTP requests answered, by route and status code.", "route", "code"),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "atlas_serve_request_duration_seconds",
			Help: "Time from the request's headers to the end of its answer, by route.",
			// From a single small tool (tens of microseconds) to an 8 MiB batch.
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		tools: promreg.Counter("atlas_serve_tools_classified_total",
			"Tools classified, over HTTP and MCP."),
		properties: promreg.Counter("atlas_serve_properties_classified_total",
			"Input-schema properties classified, over HTTP and MCP."),
	}
	m.reg = promreg.New(m.requests, m.latency, m.tools, m.properties)
	return m
}

func (m *metrics) handler() http.Handler { return promreg.Handler(m.reg) }

func (m *metrics) classified(tools, props int) {
	m.tools.Add(float64(tools))
	m.properties.Add(float64(props))
}

// route wraps h so that its requests are counted and timed under name.
func (s *Server) route(name string, h http.Handler) http.Handler {
	obs := s.metrics.latency.WithLabelValues(name)
	// A code's counter is resolved on its first use, then cached: a series
	// appears only once it has counted something.
	var codes sync.Map // int -> prometheus.Counter
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &httpserve.StatusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		code := sw.Code
		if code == 0 {
			code = http.StatusOK
		}
		c, ok := codes.Load(code)
		if !ok {
			c, _ = codes.LoadOrStore(code, s.metrics.requests.WithLabelValues(name, strconv.Itoa(code)))
		}
		c.(prometheus.Counter).Inc()
		obs.Observe(time.Since(start).Seconds())
	})
}
