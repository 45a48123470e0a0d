//go:build !race

package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// TestFastPathAllocations: beyond the engine's own, a renewal served by the fast path costs six
// allocations — the answer's header table (its request ID comes from a block made once for
// many requests), the decoded body (the input, the token, the TTL), the answer's parts (the
// timestamp, renew_after_ms) — where huma's way costs some thirty (the router's contexts,
// huma's reflection, the body decoded twice). (The race detector allocates on its own, and
// makes the pools drop what they are given back at random: not under -race.)
func TestFastPathAllocations(t *testing.T) {
	p := newFastPair(t, Options{Elections: &elections.Options{AdmissionPerMinute: -1}}, false)
	s := p.fast.s
	send := func(target string, body []byte) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		s.Handler().ServeHTTP(w, req)
		return w
	}
	won := send("/elections/"+diffRoom+"/campaign", []byte(`{"candidate_id":"a","ttl_seconds":30}`))
	token := leaderTokens.FindStringSubmatch(won.Body.String())
	if token == nil {
		t.Fatalf("campaign: %d %s", won.Code, won.Body)
	}
	body := []byte(`{"leader_token":"` + token[1] + `","ttl_seconds":30}`)
	rb := &rewindBody{}
	req := httptest.NewRequest(http.MethodPost, "/elections/"+diffRoom+"/renew", rb)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = int64(len(body))
	w := &headerWriter{h: http.Header{}}
	viaHandler := testing.AllocsPerRun(200, func() {
		rb.Reset(body)
		clear(w.h)
		s.Handler().ServeHTTP(w, req)
		if w.status != http.StatusOK {
			t.Fatalf("renew: %d", w.status)
		}
	})
	m, ctx := s.opts.Elections.Rooms, context.Background()
	viaEngine := testing.AllocsPerRun(200, func() {
		if _, err := m.Renew(ctx, diffRoom, token[1], 30*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	if extra := viaHandler - viaEngine; extra > 6 || p.fast.routed.Load() != 0 {
		t.Errorf("a renewal: %.0f allocations beyond the engine's %.0f, want at most 6 (router reached %d times)", extra, viaEngine, p.fast.routed.Load())
	}
}
