package server

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestElectionRequestCountsBySeries: the cached counters count into the vector's series, one
// series per operation and outcome, the ones created at start-up included.
func TestElectionRequestCountsBySeries(t *testing.T) {
	m := NewMetrics()
	for range 3 {
		m.ElectionRequest("renew", "ok")
	}
	m.ElectionRequest("campaign", "leader")
	m.ElectionRequest("campaign", "not_current")
	m.ElectionRequest("campaign", "not_current")
	for _, c := range []struct {
		op, outcome string
		want        float64
	}{{"renew", "ok", 3}, {"campaign", "leader", 1}, {"campaign", "not_current", 2}, {"campaign", "follower", 0}, {"resign", "ok", 0}} {
		if got := testutil.ToFloat64(m.electionRequests.WithLabelValues(c.op, c.outcome)); got != c.want {
			t.Errorf("%s/%s = %v, want %v", c.op, c.outcome, got, c.want)
		}
	}
}
