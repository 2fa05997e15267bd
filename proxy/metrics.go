package proxy

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/atlas-reproduce/atlas-reproduce/internal/promreg"
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
	forged     prometheus.Counter
	translated prometheus.Counter
	resumed    *prometheus.CounterVec
	abandoned  prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		requests: promreg.CounterVec("atlas_proxy_requests_total",
			"Messages from the client relayed or answered, by JSON-RPC method (responses to the server count as \"response\", unknown methods as \"other\").",
			"method"),
		labelled: promreg.Counter("atlas_proxy_tools_labelled_total",
			"Tools in tools/list results that gained the param-risk labels in their _meta."),
		unlabelled: promreg.Counter("atlas_proxy_tools_unlabelled_total",
			"Tools in tools/list results passed without labels: the census decoder rejects their definition."),
		cacheHits: promreg.Counter("atlas_proxy_label_cache_hits_total",
			"Tool definitions whose labels came from the cache instead of a classification."),
		hidden: promreg.CounterVec("atlas_proxy_tools_hidden_total",
			"Tools dropped from tools/list results by --hide, by class.",
			"class"),
		denied: promreg.CounterVec("atlas_proxy_calls_denied_total",
			"tools/call requests answered with an error by the policy, by class (\"unlisted\" for a tool no tools/list of the session named, \"unlabelled\" for one the decoder rejects, \"unreadable\" for params naming no tool unambiguously).",
			"class"),
		upstream: promreg.Counter("atlas_proxy_upstream_failures_total",
			"Sessions ended because the upstream server failed or could not be reached."),
		sessions: promreg.Gauge("atlas_proxy_sessions", "Sessions being relayed."),
		forged: promreg.Counter("atlas_proxy_labels_replaced_total",
			"Listed tools whose _meta already held the param-risk key, was not an object or came twice: replaced by one _meta holding the proxy's label."),
		translated: promreg.Counter("atlas_proxy_sessions_translated_total",
			"Sessions of a client of a revision older than 2026-07-28 bridged to an upstream that speaks only 2026-07-28: the proxy translates between them (results lose the members the client's revision does not define). A client is otherwise relayed at its own revision."),
		resumed: promreg.CounterVec("atlas_proxy_streams_resumed_total",
			"Event streams of calls resumed with Last-Event-ID: by a client of revision 2026-07-28 from the proxy (side \"client\"; a session's client resumes through the SDK's transport, not counted), or by the proxy from the upstream after its stream of a call broke (side \"upstream\").",
			"side"),
		abandoned: promreg.Counter("atlas_proxy_calls_abandoned_total",
			"Calls of revision 2026-07-28 ended upstream because their client was cut off and did not resume within --resume-wait."),
	}
	m.reg = promreg.New(m.requests, m.labelled, m.unlabelled, m.cacheHits, m.hidden, m.denied, m.upstream, m.sessions, m.forged, m.translated,
		m.resumed, m.abandoned)
	return m
}

func (m *metrics) handler() http.Handler { return promreg.Handler(m.reg) }

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
