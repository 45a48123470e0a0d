package server_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// corsServer is an elections server, without an election, allowing origins.
func corsServer(t *testing.T, origins ...string) string {
	t.Helper()
	m, err := rooms.New(rooms.NewMemoryStore(), "cors", rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serve(t, nil, server.Options{CORSAllowedOrigins: origins,
		Elections: &elections.Options{Rooms: m, AdmissionPerMinute: -1}})
	return base
}

// request sends method url with headers and returns the answer (body closed).
func request(t *testing.T, method, url string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestCORS: a page of an allowed origin gets its preflight answered and the request id and
// Retry-After exposed, SSE included; other origins, and a server without origins, get no CORS
// headers.
func TestCORS(t *testing.T) {
	const page = "https://dashboard.example"
	base := corsServer(t, page)
	pre := request(t, http.MethodOptions, base+"/elections/room-0001/campaign", map[string]string{
		"Origin": page, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
	if pre.StatusCode/100 != 2 || pre.Header.Get("Access-Control-Allow-Origin") != page ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers")), "content-type") {
		t.Fatalf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	// The clients' watch streams send Cache-Control: no-cache, which is preflighted.
	for _, path := range []string{"/elections/room-0001/watch", "/v1/events"} {
		pre := request(t, http.MethodOptions, base+path, map[string]string{
			"Origin": page, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "cache-control"})
		if pre.StatusCode/100 != 2 || pre.Header.Get("Access-Control-Allow-Origin") != page ||
			!strings.Contains(strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers")), "cache-control") {
			t.Fatalf("preflight of GET %s with Cache-Control: %d %v", path, pre.StatusCode, pre.Header)
		}
	}
	created := request(t, http.MethodPost, base+"/elections", map[string]string{"Origin": page})
	expose := strings.ToLower(created.Header.Get("Access-Control-Expose-Headers"))
	if created.StatusCode/100 != 2 || created.Header.Get("Access-Control-Allow-Origin") != page ||
		!strings.Contains(expose, "x-request-id") || !strings.Contains(expose, "retry-after") {
		t.Fatalf("POST /elections: %d %v", created.StatusCode, created.Header)
	}
	if h := request(t, http.MethodPost, base+"/elections", map[string]string{"Origin": "https://elsewhere.example"}).Header; h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("another origin allowed: %v", h)
	}
	if h := request(t, http.MethodPost, corsServer(t)+"/elections", map[string]string{"Origin": page}).Header; h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS headers without origins configured: %v", h)
	}

	// The watch stream: headers on the first answer, and the stream still flows.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/elections/room-0001/watch", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", page)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != page {
		t.Fatalf("watch: %v", resp.Header)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "event: state") {
		t.Fatalf("watch's first line %q, %v", line, err)
	}
}

// TestRootAndMissingNamespace: GET / leads to the docs; /v1/* on a server without an election
// says that a namespace is needed, and never echoes the path; its metrics carry no leader
// series, which a server with an election does.
func TestRootAndMissingNamespace(t *testing.T) {
	base := corsServer(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/docs/" {
		t.Fatalf("GET /: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, path := range []string{"/v1/state", "/v1/events", "/v1/info"} {
		status, _, body := send(t, http.MethodGet, base+path, "", "")
		if status != http.StatusNotFound || !strings.Contains(body, `"code":"no_namespace"`) || !strings.Contains(body, "namespace") {
			t.Errorf("GET %s: %d %s", path, status, body)
		}
	}
	_, _, metrics := send(t, http.MethodGet, base+"/metrics", "", "")
	if strings.Contains(metrics, "lfp_swarm_lease_is_leader") || strings.Contains(metrics, "lfp_swarm_lease_fence") ||
		!strings.Contains(metrics, "lfp_swarm_lease_election_requests_total") {
		t.Fatalf("metrics of an elections-only server:\n%s", metrics)
	}
	withElection, _ := serve(t, memstore.New(), server.Options{})
	if _, _, metrics := send(t, http.MethodGet, withElection+"/metrics", "", ""); !strings.Contains(metrics, "lfp_swarm_lease_is_leader 0") {
		t.Fatalf("metrics of a server with an election lack is_leader:\n%s", metrics)
	}
}
