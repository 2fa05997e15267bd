package proxy

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are one proxy's Prometheus collectors, on a registry of its own
// so that many proxies (tests, benchmarks) can live in one process.
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec
	labelled   prometheus.Counter
	unlabelled prometheus.Counter
	cacheHits  prometheus.Counter
	hidden     *prometheus.CounterVec
	denied     *prometheus.CounterVec
	upstream   prometheus.Counter
	sessions   prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atlas_proxy_requests_total",
			Help: "Messages from the client relayed or answered, by JSON-RPC method (responses to the server count as \"response\", unknown methods as \"other\").",
		}, []string{"method"}),
		labelled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "atlas_proxy_tools_labelled_total",
			Help: "Tools in tools/list results that gained the param-risk labels in their _meta.",
		}),
		unlabelled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "atlas_proxy_tools_unlabelled_total",
			Help: "Tools in tools/list results passed without labels: the census decoder rejects their definition.",
		}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "atlas_proxy_label_cache_hits_total",
			Help: "Tool definitions whose labels came from the cache instead of a classification.",
		}),
		hidden: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atlas_proxy_tools_hidden_total",
			Help: "Tools dropped from tools/list results by --hide, by class.",
		}, []string{"class"}),
		denied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atlas_proxy_calls_denied_total",
			Help: "tools/call requests answered with an error by the policy, by class (\"unlisted\" for a tool no tools/list of the session named).",
		}, []string{"class"}),
		upstream: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "atlas_proxy_upstream_failures_total",
			Help: "Sessions ended because the upstream server failed or could not be reached.",
		}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "atlas_proxy_sessions",
			Help: "Sessions being relayed.",
		}),
	}
	m.reg.MustRegister(m.requests, m.labelled, m.unlabelled, m.cacheHits, m.hidden, m.denied, m.upstream, m.sessions,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// knownMethods bounds the method label: a client must not be able to make
// a series per string it sends.
var knownMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "logging/setLevel": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/progress": true,
	"notifications/roots/list_changed": true,
}

func methodLabel(method string) string {
	if knownMethods[method] {
		return method
	}
	return "other"
}
