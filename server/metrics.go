package server

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
	"github.com/regbo/lfp-swarm-lease/server/controller"
	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/health"
)

// Metrics are the server's Prometheus metrics. It implements lease.Recorder, so that the
// election and the contender report into it, and the Metrics interface of every part of the
// server, each of which records only what it measures.
type Metrics struct {
	registry    *prometheus.Registry
	isLeader    prometheus.Gauge
	transitions prometheus.Counter
	fence       prometheus.Gauge
	renew       *prometheus.HistogramVec
	conflicts   prometheus.Counter
	takeovers   *prometheus.CounterVec
	storeErrors *prometheus.CounterVec
	sseClients  prometheus.Gauge
	sseDropped  prometheus.Counter

	electionRequests *prometheus.CounterVec
	// electionCounters caches electionRequests' counters by [operation, outcome]: a handful of
	// series, looked up on every request, where the vector hashes the label values byte by byte
	// under a lock.
	electionCounters sync.Map
	electionWatches  prometheus.Gauge
	storeDamage      prometheus.Counter
	// storeRequests and storeRequestErrors measure the requests of a store that talks to a
	// server of its own (etcd); storeRequestSeries caches their series by [store, op], looked
	// up on every request.
	storeRequests      *prometheus.HistogramVec
	storeRequestErrors *prometheus.CounterVec
	storeRequestSeries sync.Map

	connections  prometheus.Gauge
	limitedConns *prometheus.CounterVec
	ready        prometheus.Gauge
}

var (
	_ lease.Recorder     = (*Metrics)(nil)
	_ connlimit.Metrics  = (*Metrics)(nil)
	_ controller.Metrics = (*Metrics)(nil)
	_ elections.Metrics  = (*Metrics)(nil)
	_ health.Metrics     = (*Metrics)(nil)
)

// NewMetrics returns the metrics in a registry of their own (with the Go and process
// collectors).
func NewMetrics() *Metrics {
	const ns = "lfp_swarm_lease"
	m := &Metrics{
		registry:    prometheus.NewRegistry(),
		isLeader:    prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "is_leader", Help: "1 while this process holds the lease and runs its term, else 0."}),
		transitions: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "leader_transitions_total", Help: "Terms this process started or ended."}),
		fence:       prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "fence", Help: "The election's current fence as last observed."}),
		renew: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "renew_duration_seconds", Help: "Duration of the leader's renewals, by outcome.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20}}, []string{"outcome"}),
		conflicts:   prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "cas_conflicts_total", Help: "Conditional writes that lost to another write and were retried."}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "store_errors_total", Help: "Failed store calls by kind."}, []string{"kind"}),
		takeovers: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "takeovers_total",
			Help: "Live terms of another incarnation (another process, under this holder id too) this process took over, by proof: " +
				"evidence that the holder is gone (on this host: nothing holds its lock, or its caller exited; on Swarm: the task's own node " +
				"reported it ended) or expiry (the TTL). A paused, stopped or unreachable holder is never evidence."}, []string{"proof"}),
		sseClients: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "sse_clients", Help: "Connected SSE clients of /v1/events."}),
		sseDropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "sse_clients_dropped_total", Help: "SSE clients dropped because they did not keep up."}),
	}
	m.electionRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "election_requests_total",
		Help: "Requests to the elections API by operation and outcome (ok, leader, follower, or the error code)."}, []string{"operation", "outcome"})
	m.electionWatches = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "election_watches", Help: "Open watch streams of the elections API."})
	m.storeDamage = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "store_damage_total",
		Help: "Damaged stored state the rooms store found and worked around (a file store slot cut short, changed or missing); never routine, see the log."})
	m.storeRequests = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "store_request_duration_seconds",
		Help:    "Duration of each request a store sent to its servers (etcd: one per RPC attempt, op = the RPC), failed ones included.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"store", "op"})
	m.storeRequestErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "store_request_errors_total",
		Help: "Failed requests of a store to its servers (etcd: per RPC attempt), by operation and error kind (as store_errors_total's)."}, []string{"store", "op", "kind"})
	m.connections = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "http_connections", Help: "Open HTTP connections, hijacked streams included."})
	m.limitedConns = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "http_connections_limited_total",
		Help: "HTTP connections closed by the connection limits: shed (waiting, closed to admit a new one), idle_pressure " +
			"(idle past the shortened keep-alive under pressure) or refused (new, when every connection was busy)."}, []string{"reason"})
	m.ready = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "ready",
		Help: "1 when the last readiness check (/readyz, and serve's own every 5 s) found the store ready — for run --server, the elections server answering — else 0."})
	m.registry.MustRegister(m.isLeader, m.transitions, m.fence, m.renew, m.conflicts, m.takeovers, m.storeErrors, m.sseClients, m.sseDropped,
		m.electionRequests, m.electionWatches, m.storeDamage, m.storeRequests, m.storeRequestErrors, m.connections, m.limitedConns, m.ready,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every series exists from the start, so rate() and absent() work before the first error.
	for _, kind := range []string{"not_holder", "corrupt", "ambiguous", "unavailable", "not_manager", "no_quorum", "conflicts", "store_full", "permission", "canceled", "other"} {
		m.storeErrors.WithLabelValues(kind)
	}
	m.renew.WithLabelValues("ok")
	m.takeovers.WithLabelValues("evidence")
	m.takeovers.WithLabelValues("expiry")
	for _, reason := range []string{"shed", "idle_pressure", "refused"} {
		m.limitedConns.WithLabelValues(reason)
	}
	for _, op := range []string{"create", "status", "renew", "resign", "watch"} {
		m.electionRequests.WithLabelValues(op, "ok")
	}
	m.electionRequests.WithLabelValues("campaign", "leader")
	m.electionRequests.WithLabelValues("campaign", "follower")
	return m
}

// ElectionRequest implements elections.Metrics.
func (m *Metrics) ElectionRequest(op, outcome string) {
	key := [2]string{op, outcome}
	c, ok := m.electionCounters.Load(key)
	if !ok {
		c, _ = m.electionCounters.LoadOrStore(key, m.electionRequests.WithLabelValues(op, outcome))
	}
	c.(prometheus.Counter).Inc()
}

// OpenConnections implements connlimit.Metrics.
func (m *Metrics) OpenConnections(n int) { m.connections.Set(float64(n)) }

// ConnectionsLimited implements connlimit.Metrics.
func (m *Metrics) ConnectionsLimited(idlePressure, shed int, refused bool) {
	m.limitedConns.WithLabelValues("idle_pressure").Add(float64(idlePressure))
	m.limitedConns.WithLabelValues("shed").Add(float64(shed))
	if refused {
		m.limitedConns.WithLabelValues("refused").Inc()
	}
}

// SSEClientJoined implements sse.Metrics.
func (m *Metrics) SSEClientJoined() { m.sseClients.Inc() }

// SSEClientLeft implements sse.Metrics.
func (m *Metrics) SSEClientLeft(dropped bool) {
	m.sseClients.Dec()
	if dropped {
		m.sseDropped.Inc()
	}
}

// WatchOpened implements roomwatch.Metrics.
func (m *Metrics) WatchOpened() { m.electionWatches.Inc() }

// WatchClosed implements roomwatch.Metrics.
func (m *Metrics) WatchClosed() { m.electionWatches.Dec() }

// Ready implements health.Metrics.
func (m *Metrics) Ready(ready bool) {
	if ready {
		m.ready.Set(1)
	} else {
		m.ready.Set(0)
	}
}

// StoreDamaged implements health.Metrics.
func (m *Metrics) StoreDamaged() { m.storeDamage.Inc() }

// storeRequestSeries are one [store, op]'s series of the store request metrics.
type storeRequestSeries struct {
	duration prometheus.Observer
	// errors is by kind, built on a first error of the kind.
	errors sync.Map
}

// StoreRequest implements health.Metrics.
func (m *Metrics) StoreRequest(store, op string, took time.Duration, err error) {
	key := [2]string{store, op}
	v, ok := m.storeRequestSeries.Load(key)
	if !ok {
		v, _ = m.storeRequestSeries.LoadOrStore(key, &storeRequestSeries{duration: m.storeRequests.WithLabelValues(store, op)})
	}
	s := v.(*storeRequestSeries)
	s.duration.Observe(took.Seconds())
	if err == nil {
		return
	}
	kind := lease.ErrorKind(err)
	c, ok := s.errors.Load(kind)
	if !ok {
		c, _ = s.errors.LoadOrStore(kind, m.storeRequestErrors.WithLabelValues(store, op, kind))
	}
	c.(prometheus.Counter).Inc()
}

// Registry returns the registry the metrics live in.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Renewed implements lease.Recorder.
func (m *Metrics) Renewed(took time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = lease.ErrorKind(err)
	}
	m.renew.WithLabelValues(outcome).Observe(took.Seconds())
}

// Conflict implements lease.Recorder.
func (m *Metrics) Conflict() { m.conflicts.Inc() }

// TookOver implements lease.Recorder.
func (m *Metrics) TookOver(evidence string) {
	if evidence != "" {
		m.takeovers.WithLabelValues("evidence").Inc()
	} else {
		m.takeovers.WithLabelValues("expiry").Inc()
	}
}

// StoreError implements lease.Recorder.
func (m *Metrics) StoreError(kind string) { m.storeErrors.WithLabelValues(kind).Inc() }

// withoutElection removes the series that only an election gives meaning to — leadership,
// transitions, the fence, renewals and /v1/events clients — from a server that serves none, so
// that a dashboard does not read an elections-only server as a follower at fence 0.
func (m *Metrics) withoutElection() {
	for _, c := range []prometheus.Collector{m.isLeader, m.transitions, m.fence, m.renew, m.takeovers, m.sseClients, m.sseDropped} {
		m.registry.Unregister(c)
	}
}

// Leading implements lease.Recorder.
func (m *Metrics) Leading(fence uint64, leading bool) {
	m.transitions.Inc()
	if leading {
		m.isLeader.Set(1)
		m.fence.Set(float64(fence))
	} else {
		m.isLeader.Set(0)
	}
}

// ObservedFence implements controller.Metrics.
func (m *Metrics) ObservedFence(fence uint64) { m.fence.Set(float64(fence)) }
