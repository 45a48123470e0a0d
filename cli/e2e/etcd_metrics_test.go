package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestEtcdServeStoreRequestMetrics scrapes a real `serve` on a three-member etcd, with an
// election and the elections API on the same store: every etcd request it sends is counted
// once in lfp_swarm_lease_store_request_duration_seconds{store="etcd",op=RPC} — as many Txn as
// the members' own gRPC counters handled while serve was their only client — and requests that
// fail once quorum is gone are counted in lfp_swarm_lease_store_request_errors_total by kind.
func TestEtcdServeStoreRequestMetrics(t *testing.T) {
	cluster := etcdtest.StartCluster(t, 3)
	s := startServe(t, []string{"SWARM_LEASE_LISTEN=127.0.0.1:0", "SWARM_LEASE_STORE=" + etcdURL(t, cluster.Endpoints()...),
		"SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t), "SWARM_LEASE_HOLDER_ID=observer",
		"SWARM_LEASE_ADMISSION_PER_MINUTE=0", "SWARM_LEASE_ETCD_REQUEST_TIMEOUT_MS=1000"}, "serve")

	// /readyz reads the election, so serve has sent requests; from here on serve is the only
	// client of the members until the second scrape.
	pollUntil(t, 10*time.Second, "ready", func() (bool, string) {
		resp, body := call(t, http.MethodGet, s.base+"/readyz", nil)
		return resp.StatusCode == http.StatusOK, string(body)
	})
	txns := func() float64 { return etcdHandled(t, cluster.Endpoints(), "Txn") }
	ours := func() (count float64) {
		for _, m := range matching(scrape(t, s.base), "lfp_swarm_lease_store_request_duration_seconds", "store", "etcd", "op", "Txn") {
			count += float64(m.GetHistogram().GetSampleCount())
		}
		return count
	}
	etcd0, ours0 := txns(), ours()
	const campaigns = 20
	for i := range campaigns {
		room := fmt.Sprintf("/elections/metrics-room-%02d", i)
		if code, won := postElection(t, s.base, room+"/campaign", `{"candidate_id":"worker","ttl_seconds":30}`); code != http.StatusOK || won.Status != "leader" {
			t.Fatalf("campaign %d: %d %+v", i, code, won)
		}
	}
	etcd1, ours1 := txns(), ours()
	if got, handled := ours1-ours0, etcd1-etcd0; got < campaigns || got != handled {
		t.Errorf("%d campaigns: serve counted %v Txn requests, the members handled %v (each request counted once)", campaigns, got, handled)
	}
	t.Logf("%d campaigns: %v Txn requests counted by serve, %v handled by the members", campaigns, ours1-ours0, etcd1-etcd0)
	fams := scrape(t, s.base)
	for _, m := range matching(fams, "lfp_swarm_lease_store_request_duration_seconds", "store", "etcd") {
		if h := m.GetHistogram(); h.GetSampleCount() > 0 && h.GetSampleSum() <= 0 {
			t.Errorf("%v: %d requests that took no time", m.GetLabel(), h.GetSampleCount())
		}
	}
	if len(matching(fams, "lfp_swarm_lease_store_request_duration_seconds", "store", "etcd", "op", "Range")) == 0 {
		t.Error("no Range requests measured: /readyz's reads of the election are requests too")
	}

	// Without quorum, requests fail: the errors are counted by operation and kind.
	for _, m := range cluster.Members()[:2] {
		if err := m.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	pollUntil(t, 20*time.Second, "failed requests counted by kind", func() (bool, string) {
		_, _ = postElection(t, s.base, "/elections/metrics-room-z/campaign", `{"candidate_id":"worker","ttl_seconds":30}`)
		var kinds []string
		for _, m := range matching(scrape(t, s.base), "lfp_swarm_lease_store_request_errors_total", "store", "etcd") {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "kind" && m.GetCounter().GetValue() > 0 {
					kinds = append(kinds, lp.GetValue())
				}
			}
		}
		for _, k := range kinds {
			if k == "no_quorum" || k == "unavailable" {
				return true, strings.Join(kinds, ",")
			}
		}
		return false, strings.Join(kinds, ",")
	})
}

// etcdHandled sums the gRPC requests of method that the members at endpoints handled, from
// their own metrics (grpc_server_handled_total).
func etcdHandled(t *testing.T, endpoints []string, method string) float64 {
	t.Helper()
	var sum float64
	for _, ep := range endpoints {
		resp, err := apiClient.Get("http://" + ep + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("etcd %s /metrics: %v", ep, err)
		}
		for _, m := range matching(fams, "grpc_server_handled_total", "grpc_method", method) {
			sum += counterValue(m)
		}
	}
	return sum
}

func counterValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetUntyped().GetValue()
}
