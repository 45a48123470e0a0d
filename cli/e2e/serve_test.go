package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The HTTP API tests (docs/http-api.md). Every server is a real `lfp-swarm-lease serve` process — or a
// `run` process, for the leader metrics — on the file store or on the test Swarm, listening on
// a free port (SWARM_LEASE_LISTEN=127.0.0.1:0) that its `msg=listening addr=...` log line
// names. Every response any of these tests receives is checked for its X-Request-Id.

// requestIDPattern is the shape of every X-Request-Id and body request_id.
var requestIDPattern = regexp.MustCompile(`^req_[0-9a-f]{32}$`)

// apiProc is one process serving the HTTP API: `serve`, or `run` with a listen address.
type apiProc struct {
	*runProc
	base string // http://127.0.0.1:PORT
}

// apiEnv is the environment of processes serving one new election on st: a free port, a
// 100 ms poll, plus extra.
func apiEnv(t *testing.T, st storeEnv, extra ...string) []string {
	env := append([]string{
		"SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t),
		"SWARM_LEASE_LISTEN=127.0.0.1:0",
		"SWARM_LEASE_DEFAULT_POLL_MS=100",
	}, st.env...)
	return append(env, extra...)
}

// destroyAtEnd removes env's election when the test ends (on the Swarm store: its anchor
// service).
func destroyAtEnd(t *testing.T, env []string) {
	t.Cleanup(func() { cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=cleanup"}, env...), "destroy") })
}

// startServe starts `lfp-swarm-lease serve` with env and returns it once it listens. It is
// SIGKILLed at the end of the test if still running.
func startServe(t *testing.T, env []string, name string) *apiProc {
	t.Helper()
	p := startProc(t, "serve "+name, env, "serve")
	return &apiProc{runProc: p, base: listenURL(t, p)}
}

// startRunAPI starts `run -- testchild` as holder (see startRun) and returns it once its API
// listens.
func startRunAPI(t *testing.T, env []string, holder string) *apiProc {
	t.Helper()
	p := startRun(t, env, holder)
	return &apiProc{runProc: p, base: listenURL(t, p)}
}

var listeningPattern = regexp.MustCompile(`msg=listening addr=(\S+)`)

// listenURL waits for the process's `msg=listening addr=...` log line and returns its base URL.
func listenURL(t *testing.T, p *runProc) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if m := listeningPattern.FindStringSubmatch(p.out.String()); m != nil {
			return "http://" + m[1]
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%d) before it listened:\n%s", p.name, p.cmd.ProcessState.ExitCode(), p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not log its listen address within 15 s:\n%s", p.name, p.out.String())
		}
		time.Sleep(10 * time.Millisecond) // poll interval of the log
	}
}

// pollUntil calls cond until it holds, or fails after timeout with what and cond's last word.
func pollUntil(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last: %s", timeout, what, last)
		}
		time.Sleep(25 * time.Millisecond) // poll interval
	}
}

// apiClient never follows redirects (each response is checked on its own) and bounds every
// request.
var apiClient = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// call sends one request and returns the response with its whole body. It checks the response's
// X-Request-Id and, for a JSON body with a request_id, that the two agree.
func call(t *testing.T, method, url string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	id := checkRequestID(t, resp, method+" "+url)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var withID struct {
			RequestID *string `json:"request_id"`
		}
		if json.Unmarshal(body, &withID) == nil && withID.RequestID != nil && *withID.RequestID != id {
			t.Errorf("%s %s: body request_id %q != X-Request-Id %q", method, url, *withID.RequestID, id)
		}
	}
	return resp, body
}

// checkRequestID checks the response's X-Request-Id and returns it.
func checkRequestID(t *testing.T, resp *http.Response, what string) string {
	t.Helper()
	ids := resp.Header.Values("X-Request-Id")
	if len(ids) != 1 || !requestIDPattern.MatchString(ids[0]) {
		t.Errorf("%s (%d): X-Request-Id %q, want one matching %s", what, resp.StatusCode, ids, requestIDPattern)
		return ""
	}
	return ids[0]
}

// getJSON GETs url, expects 200 with a JSON body, and decodes it.
func getJSON[T any](t *testing.T, url string) T {
	t.Helper()
	resp, body := call(t, http.MethodGet, url, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("GET %s: Content-Type %q", url, ct)
	}
	var v T
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("GET %s: decode %s: %v", url, body, err)
	}
	return v
}

// apiState is the State of /v1/state and of every SSE event, decoded into the Go client's wire
// type (unknown fields refused), with a short form for test messages.
type apiState swarmlease.State

func (s apiState) String() string {
	return fmt.Sprintf("{exists=%v acquired=%v holder=%q fence=%d}", s.Exists, s.Acquired, s.HolderID, s.Fence)
}

// sameTerm reports whether a and b are the same state for observers (lease.Changed's view).
func sameTerm(a, b apiState) bool {
	return a.Exists == b.Exists && a.Acquired == b.Acquired && a.Fence == b.Fence &&
		a.HolderID == b.HolderID && a.TaskID == b.TaskID && a.NodeID == b.NodeID
}

type apiInfo struct {
	Namespace string `json:"namespace"`
	HolderID  string `json:"holder_id"`
	NodeID    string `json:"node_id"`
	TaskID    string `json:"task_id"`
	Store     string `json:"store"`
	Version   string `json:"version"`
}

type apiHealth struct {
	Status string `json:"status"`
}

// expectAPIError checks an error response: status, JSON content type, and the one error shape
// of docs/http-api.md — error, code, request_id (equal to the header), optional details and
// retry_after_ms, nothing else.
func expectAPIError(t *testing.T, resp *http.Response, body []byte, status int, code string) map[string]any {
	t.Helper()
	what := resp.Request.Method + " " + resp.Request.URL.Path
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d: %s", what, resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: error body %q is not JSON: %v", what, body, err)
	}
	for k := range m {
		if !slices.Contains([]string{"error", "code", "details", "request_id", "retry_after_ms"}, k) {
			t.Errorf("%s: unexpected field %q in error body %s", what, k, body)
		}
	}
	if msg, _ := m["error"].(string); msg == "" {
		t.Errorf("%s: error body without a message: %s", what, body)
	}
	if got, _ := m["code"].(string); got != code {
		t.Errorf("%s: code %q, want %q: %s", what, got, code, body)
	}
	if id, _ := m["request_id"].(string); id != resp.Header.Get("X-Request-Id") || !requestIDPattern.MatchString(id) {
		t.Errorf("%s: request_id %q, header %q", what, id, resp.Header.Get("X-Request-Id"))
	}
	return m
}

// TestServeEndpoints checks the controller endpoints of a `serve` process on each store: health,
// readiness, info, state (before and after an acquisition), the 404/405 error shape, and an
// X-Request-Id on every kind of response.
func TestServeEndpoints(t *testing.T) {
	for _, store := range apiStores {
		t.Run(store.name, func(t *testing.T) {
			st := store.mk(t)
			env := apiEnv(t, st)
			destroyAtEnd(t, env)
			srv := startServe(t, env, "observer")
			ns := envValue(env, "SWARM_LEASE_NAMESPACE")

			started := time.Now()
			if h := getJSON[apiHealth](t, srv.base+"/healthz"); h.Status != "ok" {
				t.Fatalf("/healthz: %+v", h)
			}
			if h := getJSON[apiHealth](t, srv.base+"/readyz"); h.Status != "ready" {
				t.Fatalf("/readyz: %+v", h)
			}
			info := getJSON[apiInfo](t, srv.base+"/v1/info")
			wantStore := map[string]string{"file": "file store", "swarm": "swarm store"}[st.name]
			if info.Namespace != ns || info.HolderID != "observer" || info.Version == "" || !strings.Contains(info.Store, wantStore) {
				t.Fatalf("/v1/info: %+v (namespace %s, store %q)", info, ns, wantStore)
			}
			state := getJSON[apiState](t, srv.base+"/v1/state")
			if state.Namespace != ns || state.Exists || state.Acquired || state.HolderID != "" {
				t.Fatalf("/v1/state of a new election: %+v", state)
			}
			t.Logf("health, readiness, info and state answered in %v", time.Since(started).Round(time.Millisecond))

			// An acquisition by another process reaches the server's state.
			r := cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=a"}, env...), "try-acquire", "--json")
			expectCode(t, r, 0, "try-acquire")
			grant := decode[tryAcquireOut](t, r).Grant
			acquired := time.Now()
			pollUntil(t, 5*time.Second, "/v1/state to show a's term", func() (bool, string) {
				state = getJSON[apiState](t, srv.base+"/v1/state")
				return state.Acquired && state.HolderID == "a" && state.Fence == grant.Fence, state.String()
			})
			t.Logf("try-acquire → /v1/state in %v", time.Since(acquired).Round(time.Millisecond))
			if !state.Exists || state.AcquiredAt == nil || state.ExpiresAt == nil || !state.ExpiresAt.Equal(*grant.ExpiresAt) {
				t.Fatalf("/v1/state of a's term: %+v, grant expires %s", state, grant.ExpiresAt)
			}

			// Unknown paths and methods: the one error shape.
			for _, c := range []struct {
				method, path string
				status       int
				code         string
			}{
				{http.MethodGet, "/nope", http.StatusNotFound, "not_found"},
				{http.MethodGet, "/v1/nope", http.StatusNotFound, "not_found"},
				{http.MethodPost, "/v1/state", http.StatusMethodNotAllowed, "method_not_allowed"},
				{http.MethodDelete, "/healthz", http.StatusMethodNotAllowed, "method_not_allowed"},
				{http.MethodPut, "/v1/events", http.StatusMethodNotAllowed, "method_not_allowed"},
			} {
				resp, body := call(t, c.method, srv.base+c.path, nil)
				expectAPIError(t, resp, body, c.status, c.code)
			}
		})
	}
}

// TestServeRequestIDs: every response — JSON, errors, redirects, docs assets, the contract,
// metrics and the SSE stream — carries a fresh X-Request-Id (a client's own is not echoed).
func TestServeRequestIDs(t *testing.T) {
	srv := startServe(t, apiEnv(t, fileStore(t)), "observer")
	seen := map[string]string{}
	forged := http.Header{"X-Request-Id": {"req_00000000000000000000000000000000"}}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/healthz", 200},
		{http.MethodGet, "/readyz", 200},
		{http.MethodGet, "/v1/info", 200},
		{http.MethodGet, "/v1/state", 200},
		{http.MethodGet, "/openapi.json", 200},
		{http.MethodGet, "/metrics", 200},
		{http.MethodGet, "/docs", http.StatusMovedPermanently},
		{http.MethodGet, "/docs/", 200},
		{http.MethodGet, "/docs/swagger-ui-bundle.js", 200},
		{http.MethodGet, "/docs/no-such-asset.js", 404},
		{http.MethodGet, "/nope", 404},
		{http.MethodPost, "/v1/info", 405},
	} {
		resp, body := call(t, c.method, srv.base+c.path, forged)
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d: %.200s", c.method, c.path, resp.StatusCode, c.status, body)
		}
		id := resp.Header.Get("X-Request-Id")
		if id == forged.Get("X-Request-Id") {
			t.Errorf("%s %s: the client's X-Request-Id was echoed", c.method, c.path)
		}
		if prev, dup := seen[id]; dup {
			t.Errorf("%s %s: X-Request-Id %s already answered %s", c.method, c.path, id, prev)
		}
		seen[id] = c.method + " " + c.path
	}
	ev := openEvents(t, srv.base) // checks the stream's X-Request-Id
	if _, dup := seen[ev.requestID]; dup {
		t.Errorf("the SSE stream's X-Request-Id %s was already used", ev.requestID)
	}
}

// TestServeStoreNotReady: /healthz never calls the store, so it answers 200 while /readyz
// answers 503 with the error shape — with the Swarm store on a dead socket, on a plain engine
// in no Swarm, and with a corrupt file-store election. The watcher's failures are counted.
func TestServeStoreNotReady(t *testing.T) {
	leasetest.Long(t, "waits out the server's first-read timeouts")
	cases := []struct {
		name    string
		env     func(t *testing.T) []string
		details string // in /readyz's details
		kind    string // of store_errors_total
		// unread: also check /v1/state and /v1/events of the never-read election (one case
		// suffices: the path is the same for every store, and it takes seconds).
		unread bool
	}{
		{"swarm dead socket", func(t *testing.T) []string {
			return []string{"SWARM_LEASE_STORE=swarm", "DOCKER_HOST=unix://" + filepath.Join(t.TempDir(), "dead.sock")}
		}, "unreachable", "unavailable", true},
		{"plain engine", func(t *testing.T) []string {
			return []string{"SWARM_LEASE_STORE=swarm", "DOCKER_HOST=" + leasetest.PlainDockerHost(t)}
		}, "not a swarm manager", "not_manager", false},
		{"corrupt file", func(t *testing.T) []string {
			dir := t.TempDir()
			return []string{"SWARM_LEASE_STORE=file://" + dir}
		}, "corrupt", "corrupt", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := apiEnv(t, storeEnv{env: c.env(t)})
			if dir, ok := strings.CutPrefix(envValue(env, "SWARM_LEASE_STORE"), "file://"); ok {
				expectCode(t, cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=a"}, env...), "init"), 0, "init")
				files, _ := filepath.Glob(filepath.Join(dir, "*.lease.json"))
				if len(files) != 1 {
					t.Fatalf("lease files: %v", files)
				}
				if err := os.WriteFile(files[0], []byte("{broken"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			srv := startServe(t, env, "observer")

			began := time.Now()
			if h := getJSON[apiHealth](t, srv.base+"/healthz"); h.Status != "ok" {
				t.Fatalf("/healthz: %+v", h)
			}
			if d := time.Since(began); d > time.Second {
				t.Errorf("/healthz took %v with a broken store", d)
			}
			resp, body := call(t, http.MethodGet, srv.base+"/readyz", nil)
			m := expectAPIError(t, resp, body, http.StatusServiceUnavailable, "not_ready")
			if details, _ := m["details"].(string); !strings.Contains(details, c.details) {
				t.Errorf("/readyz details %q do not mention %q", details, c.details)
			}
			t.Logf("/readyz: %s", body)
			pollUntil(t, 5*time.Second, "store_errors_total{kind="+c.kind+"}", func() (bool, string) {
				v, ok := metricValue(scrape(t, srv.base), "lfp_swarm_lease_store_errors_total", "kind", c.kind)
				return ok && v > 0, fmt.Sprint(v, ok)
			})
			expectFamily(t, scrape(t, srv.base), "serve", "lfp_swarm_lease_store_errors_total", dto.MetricType_COUNTER)
			if c.unread {
				checkUnreadElectionAnswersPromptly(t, srv.base)
			}
		})
	}
}

// unreadAnswerWithin bounds how long a server that cannot read its store may take to answer
// /v1/state and /v1/events (it may wait a few seconds for a first read).
const unreadAnswerWithin = 8 * time.Second

// checkUnreadElectionAnswersPromptly: a server that has never read the election answers
// /v1/state and /v1/events with 503 not_ready (after a bounded wait for a first read) rather
// than hanging until the client gives up. Both are asked concurrently.
func checkUnreadElectionAnswersPromptly(t *testing.T, base string) {
	t.Helper()
	type answer struct {
		resp     *http.Response
		body     []byte
		err      error
		timedOut bool
	}
	paths := []string{"/v1/state", "/v1/events"}
	answers := make([]answer, len(paths))
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), unreadAnswerWithin)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
			resp, err := apiClient.Do(req)
			if err != nil {
				answers[i] = answer{err: err, timedOut: ctx.Err() != nil}
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			answers[i] = answer{resp: resp, body: body, err: err, timedOut: ctx.Err() != nil}
		})
	}
	wg.Wait()
	for i, a := range answers {
		switch {
		case a.timedOut:
			t.Errorf("GET %s sent no complete response within %v while the store has never been read "+
				"(hub.snapshot/hub.subscribe wait for the first snapshot without bound)", paths[i], unreadAnswerWithin)
		case a.err != nil:
			t.Fatalf("GET %s: %v", paths[i], a.err)
		default:
			checkRequestID(t, a.resp, "GET "+paths[i])
			expectAPIError(t, a.resp, a.body, http.StatusServiceUnavailable, "not_ready")
			t.Logf("GET %s of the never-read election: %s %s", paths[i], a.resp.Status, a.body)
		}
	}
}

// TestServeEventsRenewalsSuppressed: the SSE stream's headers; the first event is `current`;
// while a `run` leader renews every 100 ms the stream carries only keep-alive comments (every
// keep_alive_ms = 200 ms) and no `change`; a handover then produces changes ending in the new
// holder's term.
func TestServeEventsRenewalsSuppressed(t *testing.T) {
	leasetest.Long(t, "watches an event stream through a TTL's renewals")
	st := fileStore(t)
	env := apiEnv(t, st, "SWARM_LEASE_TTL_MS=1500", "SWARM_LEASE_RENEW_INTERVAL_MS=100",
		"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=200", "SWARM_LEASE_MAX_CLOCK_SKEW_MS=100",
		"SWARM_LEASE_KEEP_ALIVE_MS=200", "TESTCHILD_LOG="+filepath.Join(t.TempDir(), "events.log"))
	a := startRunAPI(t, env, "a")
	srv := startServe(t, env, "observer")
	var state apiState
	pollUntil(t, 10*time.Second, "a to lead", func() (bool, string) {
		state = getJSON[apiState](t, srv.base+"/v1/state")
		return state.Acquired && state.HolderID == "a", state.String()
	})

	ev := openEvents(t, srv.base)
	first := ev.next(t, 5*time.Second)
	if first.event != "current" {
		t.Fatalf("first frame %+v, want event current", first)
	}
	cur := first.state(t)
	if !sameTerm(cur, state) {
		t.Fatalf("current %v, /v1/state %v", cur, state)
	}

	// The time under test: 1.6 s is 16 renew intervals and 8 keep-alive intervals.
	const window = 1600 * time.Millisecond
	// The leader's own metrics prove that it renewed meanwhile.
	renewals := func() uint64 {
		return histogramCount(scrape(t, a.base), "lfp_swarm_lease_renew_duration_seconds", "outcome", "ok")
	}
	renewedBefore := renewals()
	var keepAlives []time.Time
	for end := time.Now().Add(window); time.Now().Before(end); {
		f, ok := ev.nextWithin(time.Until(end))
		if !ok {
			break
		}
		if f.event != "" {
			t.Fatalf("event %q %s while the holder only renewed", f.event, f.data)
		}
		if f.comment != "keep-alive" {
			t.Fatalf("unexpected comment %q", f.comment)
		}
		keepAlives = append(keepAlives, f.at)
	}
	renewed := renewals() - renewedBefore
	after := getJSON[apiState](t, srv.base+"/v1/state")
	if renewed < 5 || after.Fence != cur.Fence || after.HolderID != "a" {
		t.Fatalf("%d renewals in %v (want about 16 at 100 ms), state %v", renewed, window, after)
	}
	// The state (unlike the stream) is the complete snapshot: it follows the renewals.
	if !after.ExpiresAt.After(time.Now()) {
		t.Errorf("/v1/state of a renewing leader shows acquired=true with expires_at %s in the past (renewed_at %s, "+
			"the acquisition): the watcher passes on only holder/fence changes", after.ExpiresAt.Format(time.RFC3339Nano),
			after.RenewedAt.Format(time.RFC3339Nano))
	}
	var gaps []time.Duration
	for i := 1; i < len(keepAlives); i++ {
		gaps = append(gaps, keepAlives[i].Sub(keepAlives[i-1]))
	}
	t.Logf("%v with %d renewals: no change event, %d keep-alives, gaps %v", window, renewed, len(keepAlives), roundAll(gaps))
	if len(keepAlives) < 5 {
		t.Fatalf("%d keep-alives in %v, want about %d (keep_alive_ms=200)", len(keepAlives), window, window/(200*time.Millisecond))
	}
	// Gaps are measured where the client reads, so they jitter; their mean cannot.
	mean := keepAlives[len(keepAlives)-1].Sub(keepAlives[0]) / time.Duration(len(gaps))
	if mean < 150*time.Millisecond || mean > 300*time.Millisecond || slices.Max(gaps) > time.Second {
		t.Fatalf("keep-alive gaps %v (mean %v), want about 200 ms each", roundAll(gaps), mean)
	}

	// Handover: b waits as follower, a is terminated and releases, b takes over.
	startRunAPI(t, env, "b")
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	last := cur
	var changes []apiState
	for !(last.Acquired && last.HolderID == "b") {
		f := ev.nextEvent(t, 10*time.Second)
		if f.event != "change" {
			t.Fatalf("event %q after current, want change", f.event)
		}
		s := f.state(t)
		if sameTerm(s, last) {
			t.Fatalf("change %v repeats the previous state %v", s, last)
		}
		changes, last = append(changes, s), s
	}
	t.Logf("SIGTERM to the leader → change events %v; b's term seen after %v", changes, time.Since(sent).Round(time.Millisecond))
	if last.Fence != cur.Fence+1 {
		t.Fatalf("b's fence %d, want %d", last.Fence, cur.Fence+1)
	}
	if code := a.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("the terminated leader exited %d", code)
	}
}

// TestServeEventsManyClients: 200 concurrent SSE clients all get `current`, sse_clients counts
// them, and all get the same change promptly; disconnecting clients lowers the gauge.
func TestServeEventsManyClients(t *testing.T) {
	const clients = 200
	env := apiEnv(t, fileStore(t))
	x := append([]string{"SWARM_LEASE_HOLDER_ID=x"}, env...)
	// The election exists before the clients connect, so that the acquisition is one write
	// (on a new election, try-acquire creates the record first: two changes).
	expectCode(t, cli(t, x, "init"), 0, "init")
	srv := startServe(t, env, "observer")
	evs := make([]*sseClient, clients)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range evs {
		wg.Go(func() {
			c, err := dialEvents(srv.base)
			if err != nil {
				errs <- err
				return
			}
			evs[i] = c
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, c := range evs {
		t.Cleanup(c.close)
		if f := c.nextEvent(t, 10*time.Second); f.event != "current" {
			t.Fatalf("first event %q", f.event)
		}
	}
	if v := gauge(t, srv.base, "lfp_swarm_lease_sse_clients"); v != clients {
		t.Fatalf("sse_clients = %v with %d clients connected", v, clients)
	}

	r := cli(t, x, "try-acquire", "--json")
	expectCode(t, r, 0, "try-acquire")
	acquired := time.Now()
	grant := decode[tryAcquireOut](t, r).Grant
	var latencies []time.Duration
	var want apiState
	for i, c := range evs {
		f := c.nextEvent(t, 10*time.Second)
		s := f.state(t)
		if f.event != "change" || !s.Acquired || s.HolderID != "x" || s.Fence != grant.Fence {
			t.Fatalf("client %d: %q %v, want change to x's fence %d", i, f.event, s, grant.Fence)
		}
		if i == 0 {
			want = s
		} else if !statesEqual(s, want) {
			t.Fatalf("client %d got %+v, client 0 %+v", i, s, want)
		}
		latencies = append(latencies, f.at.Sub(acquired))
	}
	slices.Sort(latencies)
	t.Logf("%d clients: change received after p50 %v, max %v (try-acquire's exit → event)",
		clients, latencies[clients/2].Round(time.Millisecond), latencies[clients-1].Round(time.Millisecond))
	if latencies[clients-1] > 3*time.Second {
		t.Fatalf("the slowest client got the change after %v", latencies[clients-1])
	}

	for _, c := range evs[:clients/2] {
		c.close()
	}
	pollUntil(t, 5*time.Second, "sse_clients to drop to the connected clients", func() (bool, string) {
		v := gauge(t, srv.base, "lfp_swarm_lease_sse_clients")
		return v == clients/2, fmt.Sprint(v)
	})
}

// TestServeEventsSlowClientDropped: a client that never reads (tiny receive window) is dropped
// once it lags, counted in sse_clients_dropped_total, while a reading client keeps getting every
// change promptly.
func TestServeEventsSlowClientDropped(t *testing.T) {
	dir := t.TempDir()
	env := apiEnv(t, storeEnv{env: []string{"SWARM_LEASE_STORE=file://" + dir}}, "SWARM_LEASE_KEEP_ALIVE_MS=100")
	srv := startServe(t, env, "observer")
	good := openEvents(t, srv.base)
	if f := good.nextEvent(t, 5*time.Second); f.event != "current" {
		t.Fatalf("first event %q", f.event)
	}
	dialSlowEvents(t, srv.base) // connected until the test ends, never read
	pollUntil(t, 5*time.Second, "both clients to be connected", func() (bool, string) {
		v := gauge(t, srv.base, "lfp_swarm_lease_sse_clients")
		return v == 2, fmt.Sprint(v)
	})

	// A storm of changes from this process: every acquisition and release is one.
	store, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A long holder ID makes each event ~2 KB, so the slow client's buffers fill sooner.
	storm, err := lease.New(store, envValue(env, "SWARM_LEASE_NAMESPACE"),
		lease.Identity{HolderID: "storm-" + strings.Repeat("s", 1500)}, lease.WithTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var goodStates []apiState
	var lags []time.Duration
	started := time.Now()
	var fence uint64
	dropped := false
	for i := 0; !dropped; i++ {
		res, err := storm.TryAcquire(ctx)
		if err != nil || !res.Acquired {
			t.Fatalf("storm acquisition %d: %+v %v", i, res, err)
		}
		fence = res.Grant.Fence
		written := time.Now()
		// The reading client follows: it sees this term within a second.
		for {
			f := good.nextEvent(t, time.Second)
			s := f.state(t)
			goodStates = append(goodStates, s)
			if s.Acquired && s.Fence == fence {
				lags = append(lags, f.at.Sub(written))
				break
			}
		}
		if err := storm.Release(ctx, fence); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			v, _ := metricValue(scrape(t, srv.base), "lfp_swarm_lease_sse_clients_dropped_total")
			dropped = v >= 1
		}
		if time.Since(started) > 30*time.Second {
			t.Fatalf("the slow client was not dropped after %d changes in %v", 2*i, time.Since(started))
		}
	}
	slices.Sort(lags)
	t.Logf("slow client dropped after %d terms (%d events seen by the reading client) in %v; reading client's lag p50 %v, max %v",
		len(lags), len(goodStates), time.Since(started).Round(time.Millisecond),
		lags[len(lags)/2].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond))
	if lags[len(lags)-1] > time.Second {
		t.Errorf("the reading client lagged up to %v behind the storm", lags[len(lags)-1])
	}
	if v := gauge(t, srv.base, "lfp_swarm_lease_sse_clients"); v != 1 {
		t.Fatalf("sse_clients = %v after the drop, want 1 (the reading client)", v)
	}
	// The reading client is still connected and still served.
	res, err := storm.TryAcquire(ctx)
	if err != nil || !res.Acquired {
		t.Fatalf("acquisition after the drop: %+v %v", res, err)
	}
	for {
		s := good.nextEvent(t, time.Second).state(t)
		if s.Fence == res.Grant.Fence {
			break
		}
	}
}

// TestServeGracefulShutdown: SIGTERM to `serve` ends every SSE stream cleanly (the chunked body
// ends, no reset) and the process exits 0 promptly.
func TestServeGracefulShutdown(t *testing.T) {
	srv := startServe(t, apiEnv(t, fileStore(t)), "observer")
	var evs []*sseClient
	for range 3 {
		c := openEvents(t, srv.base)
		if f := c.nextEvent(t, 5*time.Second); f.event != "current" {
			t.Fatalf("first event %q", f.event)
		}
		evs = append(evs, c)
	}
	sent := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for i, c := range evs {
		if f, ok := c.nextWithin(3 * time.Second); ok {
			t.Fatalf("client %d: frame %+v after SIGTERM, want the end of the stream", i, f)
		}
		if !c.ended() {
			t.Fatalf("client %d: the stream did not end within 3 s of SIGTERM", i)
		}
		if err := c.err(); err != nil {
			t.Fatalf("client %d: the stream ended with %v, want a clean EOF", i, err)
		}
	}
	streamsEnded := time.Since(sent)
	if code := srv.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM, want 0", code)
	}
	t.Logf("SIGTERM → streams ended in %v, process exited in %v", streamsEnded.Round(time.Millisecond), time.Since(sent).Round(time.Millisecond))
	if d := time.Since(sent); d > 3*time.Second {
		t.Fatalf("serve took %v to exit", d)
	}
}

// TestServeReplicasConsistent: two `serve` replicas of one election serve the same state and
// stream the same changes, on each store.
func TestServeReplicasConsistent(t *testing.T) {
	for _, store := range apiStores {
		t.Run(store.name, func(t *testing.T) {
			env := apiEnv(t, store.mk(t))
			destroyAtEnd(t, env)
			replicas := []*apiProc{startServe(t, env, "r1"), startServe(t, env, "r2")}
			var evs []*sseClient
			for _, r := range replicas {
				c := openEvents(t, r.base)
				if f := c.nextEvent(t, 10*time.Second); f.event != "current" {
					t.Fatalf("first event %q", f.event)
				}
				evs = append(evs, c)
			}
			x := append([]string{"SWARM_LEASE_HOLDER_ID=x"}, env...)
			r := cli(t, x, "try-acquire", "--json")
			expectCode(t, r, 0, "try-acquire")
			fence := decode[tryAcquireOut](t, r).Grant.Fence
			expectReplicasAgree(t, replicas, evs, func(s apiState) bool { return s.Acquired && s.HolderID == "x" && s.Fence == fence })
			expectCode(t, cli(t, x, "release", strconv.FormatUint(fence, 10)), 0, "release")
			expectReplicasAgree(t, replicas, evs, func(s apiState) bool { return s.Exists && !s.Acquired && s.Fence == fence })
		})
	}
}

// expectReplicasAgree waits until each replica's stream delivers a change satisfying want, and
// checks that the replicas' changes and /v1/state are identical.
func expectReplicasAgree(t *testing.T, replicas []*apiProc, evs []*sseClient, want func(apiState) bool) {
	t.Helper()
	var got []apiState
	for i, c := range evs {
		for {
			f := c.nextEvent(t, 10*time.Second)
			if f.event != "change" {
				t.Fatalf("replica %d: event %q", i, f.event)
			}
			if s := f.state(t); want(s) {
				got = append(got, s)
				break
			}
		}
	}
	for i, r := range replicas {
		s := getJSON[apiState](t, r.base+"/v1/state")
		if !statesEqual(s, got[0]) || !statesEqual(got[i], got[0]) {
			t.Fatalf("replica %d: state %+v, event %+v; replica 0's event %+v", i, s, got[i], got[0])
		}
	}
	t.Logf("both replicas: %v", got[0])
}

// TestRunMetrics scrapes /metrics of a leader's and a follower's `run` on each store: valid
// Prometheus text with is_leader, leader_transitions_total, fence, renew_duration_seconds,
// cas_conflicts_total, store_errors_total and sse_clients, and a handover moves is_leader.
func TestRunMetrics(t *testing.T) {
	for _, store := range apiStores {
		t.Run(store.name, func(t *testing.T) {
			st := store.mk(t)
			timing := []string{"SWARM_LEASE_TTL_MS=1500", "SWARM_LEASE_RENEW_INTERVAL_MS=100", "SWARM_LEASE_MAX_CLOCK_SKEW_MS=100"}
			if st.name == "swarm" {
				timing = []string{"SWARM_LEASE_TTL_MS=3000", "SWARM_LEASE_RENEW_INTERVAL_MS=250", "SWARM_LEASE_MAX_CLOCK_SKEW_MS=200"}
			}
			env := apiEnv(t, st, append(timing, "SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=200",
				"TESTCHILD_LOG="+filepath.Join(t.TempDir(), "events.log"))...)
			destroyAtEnd(t, env)
			a := startRunAPI(t, env, "a")
			var state apiState
			pollUntil(t, 15*time.Second, "a to lead", func() (bool, string) {
				state = getJSON[apiState](t, a.base+"/v1/state")
				return state.Acquired && state.HolderID == "a", state.String()
			})
			b := startRunAPI(t, env, "b")

			// The leader: is_leader 1 and renewals measured (a few renew intervals pass).
			var fams map[string]*dto.MetricFamily
			pollUntil(t, 10*time.Second, "the leader's renewals in renew_duration_seconds", func() (bool, string) {
				fams = scrape(t, a.base)
				n := histogramCount(fams, "lfp_swarm_lease_renew_duration_seconds", "outcome", "ok")
				return n >= 3, fmt.Sprint(n)
			})
			expectMetric(t, fams, "a", "lfp_swarm_lease_is_leader", 1)
			expectMetric(t, fams, "a", "lfp_swarm_lease_leader_transitions_total", 1)
			expectMetric(t, fams, "a", "lfp_swarm_lease_fence", float64(state.Fence))
			expectMetric(t, fams, "a", "lfp_swarm_lease_cas_conflicts_total", 0)
			expectMetric(t, fams, "a", "lfp_swarm_lease_sse_clients", 0)
			if fams["lfp_swarm_lease_store_errors_total"] == nil {
				t.Errorf("a healthy server's /metrics lacks lfp_swarm_lease_store_errors_total: its kinds are not " +
					"initialised, so the family appears only after the first error (rate() and absent() alerts break)")
			} else {
				expectFamily(t, fams, "a", "lfp_swarm_lease_store_errors_total", dto.MetricType_COUNTER)
			}
			expectFamily(t, fams, "a", "lfp_swarm_lease_renew_duration_seconds", dto.MetricType_HISTOGRAM)

			// The follower: is_leader 0, the same fence, sse_clients counting its streams.
			pollUntil(t, 5*time.Second, "b to observe a's fence", func() (bool, string) {
				v, _ := metricValue(scrape(t, b.base), "lfp_swarm_lease_fence")
				return v == float64(state.Fence), fmt.Sprint(v)
			})
			e1, e2 := openEvents(t, b.base), openEvents(t, b.base)
			e1.nextEvent(t, 5*time.Second)
			e2.nextEvent(t, 5*time.Second)
			fams = scrape(t, b.base)
			expectMetric(t, fams, "b", "lfp_swarm_lease_is_leader", 0)
			expectMetric(t, fams, "b", "lfp_swarm_lease_leader_transitions_total", 0)
			expectMetric(t, fams, "b", "lfp_swarm_lease_sse_clients", 2)
			expectFamily(t, fams, "b", "lfp_swarm_lease_cas_conflicts_total", dto.MetricType_COUNTER)
			e1.close()
			pollUntil(t, 5*time.Second, "b's sse_clients to count one stream", func() (bool, string) {
				v := gauge(t, b.base, "lfp_swarm_lease_sse_clients")
				return v == 1, fmt.Sprint(v)
			})

			// Handover: is_leader moves to b with the next fence.
			if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			pollUntil(t, 15*time.Second, "b to lead", func() (bool, string) {
				fams = scrape(t, b.base)
				v, _ := metricValue(fams, "lfp_swarm_lease_is_leader")
				return v == 1, fmt.Sprint(v)
			})
			expectMetric(t, fams, "b", "lfp_swarm_lease_leader_transitions_total", 1)
			expectMetric(t, fams, "b", "lfp_swarm_lease_fence", float64(state.Fence+1))
			if code := a.wait(t, 10*time.Second); code != 0 {
				t.Fatalf("a exited %d after SIGTERM", code)
			}
		})
	}
}

// TestServeDocsOffline loads /docs/ in a real headless Chromium with the network log on and no
// name resolution: Swagger UI renders the operations (its JavaScript ran against
// /openapi.json) and every request the page made went to the server itself.
func TestServeDocsOffline(t *testing.T) {
	chromium := chromiumPath(t)
	srv := startServe(t, apiEnv(t, fileStore(t)), "observer")
	dir := t.TempDir()
	netLog := filepath.Join(dir, "netlog.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--no-default-browser-check",
		// Offline: no host name resolves (the server is an IP literal).
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--log-net-log="+netLog,
		"--virtual-time-budget=5000", "--dump-dom", srv.base+"/docs/")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	var dom, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &dom, &stderr
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, lastLines(stderr.String(), 20))
	}
	t.Logf("chromium rendered /docs/ in %v", time.Since(began).Round(time.Millisecond))

	html := dom.String()
	for _, want := range []string{
		`data-path="/healthz"`, `data-path="/readyz"`, `data-path="/v1/info"`, `data-path="/v1/state"`,
		`data-path="/v1/events"`, "The election's current state", "Server-sent events of the election", "lfp-swarm-lease",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the rendered DOM lacks %q (Swagger UI did not render the contract)", want)
		}
	}

	page, browser := netLogRequests(t, netLog, srv.base)
	if len(browser) > 0 {
		t.Logf("ignored %d requests of the browser itself (no page initiator): %v", len(browser), browser)
	}
	for _, u := range page {
		if !isLocalURL(u) {
			t.Errorf("the docs page requested an external URL: %s", u)
		}
	}
	for _, want := range []string{"/docs/", "/openapi.json", "/docs/swagger-ui-bundle.js"} {
		if !slices.Contains(page, srv.base+want) {
			t.Errorf("the network log lacks the page's request of %s: %v", want, page)
		}
	}
	if t.Failed() {
		t.Logf("page requests: %v", page)
	}
}

// chromiumPath returns Debian's chromium. Without it the test is skipped — except with CI=true,
// where it fails (.ci/run installs it).
func chromiumPath(t *testing.T) string {
	leasetest.Long(t, "drives a headless Chromium")
	const path = "/usr/bin/chromium"
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing and CI=true: the /docs browser test must run in CI (apt-get install chromium)", path)
	}
	t.Skipf("%s is missing: skipping the /docs browser test (apt-get install -y chromium)", path)
	return ""
}

// netLogRequests returns the URLs of every request Chromium's network log shows, split into
// the page's (made for a document of base: the top frame of their network isolation key, or
// their initiator, is the server) and the browser's own background requests (updates, time,
// accounts), which no page initiated.
func netLogRequests(t *testing.T, path, base string) (page, browser []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int            `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatalf("net log %s: %v", path, err)
	}
	startJob, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatal("net log without URL_REQUEST_START_JOB events")
	}
	site := base[:strings.LastIndexByte(base, ':')] // http://127.0.0.1
	for _, e := range log.Events {
		u, _ := e.Params["url"].(string)
		if e.Type != startJob || u == "" || strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "chrome:") {
			continue
		}
		nik, _ := e.Params["network_isolation_key"].(string)
		initiator, _ := e.Params["initiator"].(string)
		if strings.HasPrefix(nik, site+" ") || initiator == base || strings.HasPrefix(u, base+"/") {
			page = append(page, u)
		} else {
			browser = append(browser, u)
		}
	}
	return page, browser
}

// isLocalURL reports whether u is on this host (127.0.0.1 or localhost).
func isLocalURL(u string) bool {
	rest, ok := strings.CutPrefix(u, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(u, "https://")
	}
	if !ok {
		return false
	}
	host := rest
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return host == "127.0.0.1" || host == "localhost"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// apiStores are the stores the API tests run on; each constructor is called inside its
// subtest, so that a missing test Swarm skips (or, with CI=true, fails) only the Swarm subtest.
var apiStores = []struct {
	name string
	mk   func(*testing.T) storeEnv
}{{"file", fileStore}, {"swarm", swarmStore}}

// envValue is the last value of key in env ("" without one).
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, key+"="); ok {
			v = rest
		}
	}
	return v
}

// statesEqual compares two states including their timestamps.
func statesEqual(a, b apiState) bool {
	eq := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	return sameTerm(a, b) && a.Namespace == b.Namespace && a.TTLMillis == b.TTLMillis &&
		eq(a.AcquiredAt, b.AcquiredAt) && eq(a.RenewedAt, b.RenewedAt) && eq(a.ExpiresAt, b.ExpiresAt)
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// --- SSE -------------------------------------------------------------------------------------

// sseFrame is one frame of an event stream: an event (event, data) or a comment.
type sseFrame struct {
	event, data, comment string
	at                   time.Time // when the client read it
}

func (f sseFrame) state(t *testing.T) apiState {
	t.Helper()
	var s apiState
	dec := json.NewDecoder(strings.NewReader(f.data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("event %q data %q: %v", f.event, f.data, err)
	}
	return s
}

// sseClient reads one /v1/events stream in the background.
type sseClient struct {
	requestID string
	frames    chan sseFrame // closed when the stream ends
	cancel    context.CancelFunc
	done      chan struct{}
	mu        sync.Mutex
	readErr   error
}

// sseTransport gives every stream its own connection.
var sseTransport = &http.Transport{MaxIdleConnsPerHost: -1, DisableKeepAlives: true}

// openEvents opens /v1/events, checks the stream's headers, and closes it when the test ends.
func openEvents(t *testing.T, base string) *sseClient {
	t.Helper()
	c, err := dialEvents(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

// dialEvents opens /v1/events and checks its status and headers (safe off the test goroutine).
func dialEvents(base string) (*sseClient, error) {
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := sseTransport.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, err
	}
	h := resp.Header
	var problems []string
	if resp.StatusCode != http.StatusOK {
		problems = append(problems, "status "+resp.Status)
	}
	if ct := h.Get("Content-Type"); ct != "text/event-stream" {
		problems = append(problems, "Content-Type "+ct)
	}
	if cc := h.Get("Cache-Control"); !strings.Contains(cc, "no-cache") {
		problems = append(problems, "Cache-Control "+cc)
	}
	if xa := h.Get("X-Accel-Buffering"); xa != "no" {
		problems = append(problems, "X-Accel-Buffering "+xa)
	}
	id := h.Get("X-Request-Id")
	if !requestIDPattern.MatchString(id) {
		problems = append(problems, "X-Request-Id "+id)
	}
	if len(problems) > 0 {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET /v1/events: %s", strings.Join(problems, "; "))
	}
	c := &sseClient{requestID: id, frames: make(chan sseFrame, 4096), cancel: cancel, done: make(chan struct{})}
	go c.read(resp.Body)
	return c, nil
}

func (c *sseClient) read(body io.ReadCloser) {
	defer close(c.done)
	defer close(c.frames)
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var f sseFrame
	pending := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if pending {
				f.at = time.Now()
				c.frames <- f
			}
			f, pending = sseFrame{}, false
		case strings.HasPrefix(line, ":"):
			f.comment, pending = strings.TrimSpace(line[1:]), true
		case strings.HasPrefix(line, "event: "):
			f.event, pending = line[len("event: "):], true
		case strings.HasPrefix(line, "data: "):
			f.data, pending = line[len("data: "):], true
		default:
			f.comment, pending = "unexpected line: "+line, true
		}
	}
	c.mu.Lock()
	c.readErr = sc.Err()
	c.mu.Unlock()
}

// nextWithin returns the next frame, or false when the stream ended or timeout passed.
func (c *sseClient) nextWithin(timeout time.Duration) (sseFrame, bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case f, ok := <-c.frames:
		if !ok {
			<-c.done // the reader has recorded how the stream ended
		}
		return f, ok
	case <-timer.C:
		return sseFrame{}, false
	}
}

// next returns the next frame, failing after timeout or at the end of the stream.
func (c *sseClient) next(t *testing.T, timeout time.Duration) sseFrame {
	t.Helper()
	f, ok := c.nextWithin(timeout)
	if !ok {
		t.Fatalf("no SSE frame within %v (ended: %v, err: %v)", timeout, c.ended(), c.err())
	}
	return f
}

// nextEvent returns the next event, skipping comments.
func (c *sseClient) nextEvent(t *testing.T, timeout time.Duration) sseFrame {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		f := c.next(t, time.Until(deadline))
		if f.event != "" {
			return f
		}
	}
}

func (c *sseClient) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// err is the stream's read error once it ended (nil: a clean end of the body).
func (c *sseClient) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// close disconnects the client and waits for its reader (idempotent).
func (c *sseClient) close() {
	c.cancel()
	go func() {
		for range c.frames { // drain, so that the reader can finish
		}
	}()
	<-c.done
}

// dialSlowEvents opens /v1/events on a raw connection that never reads, with the smallest
// receive buffer the kernel allows and a small segment size (which keeps the server's send
// buffer small too), so that the server's writes soon block. It is closed when the test ends.
func dialSlowEvents(t *testing.T, base string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1)
			if serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 536)
			}
		})
		return errors.Join(err, serr)
	}}
	addr := strings.TrimPrefix(base, "http://")
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "GET /v1/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", addr); err != nil {
		t.Fatal(err)
	}
	return conn
}

// --- metrics ---------------------------------------------------------------------------------

// scrape GETs /metrics and parses it as Prometheus text.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, body := call(t, http.MethodGet, base+"/metrics", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	if f := expfmt.ResponseFormat(resp.Header); f.FormatType() != expfmt.TypeTextPlain {
		t.Fatalf("/metrics: Content-Type %q is not the Prometheus text format", resp.Header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse as Prometheus text: %v", err)
	}
	return fams
}

// matching returns the metrics of family name whose labels include the label pairs.
func matching(fams map[string]*dto.MetricFamily, name string, labels ...string) []*dto.Metric {
	fam := fams[name]
	if fam == nil {
		return nil
	}
	var out []*dto.Metric
next:
	for _, m := range fam.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// metricValue sums the gauge or counter values of family name with the label pairs.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	ms := matching(fams, name, labels...)
	sum := 0.0
	for _, m := range ms {
		switch {
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		}
	}
	return sum, len(ms) > 0
}

// histogramCount sums the sample counts of histogram name with the label pairs.
func histogramCount(fams map[string]*dto.MetricFamily, name string, labels ...string) uint64 {
	var n uint64
	for _, m := range matching(fams, name, labels...) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// gauge scrapes base and returns the value of the unlabelled metric name.
func gauge(t *testing.T, base, name string) float64 {
	t.Helper()
	v, ok := metricValue(scrape(t, base), name)
	if !ok {
		t.Fatalf("/metrics lacks %s", name)
	}
	return v
}

func expectMetric(t *testing.T, fams map[string]*dto.MetricFamily, who, name string, want float64) {
	t.Helper()
	v, ok := metricValue(fams, name)
	if !ok || v != want {
		t.Errorf("%s: %s = %v (present %v), want %v", who, name, v, ok, want)
	}
}

func expectFamily(t *testing.T, fams map[string]*dto.MetricFamily, who, name string, typ dto.MetricType) {
	t.Helper()
	fam := fams[name]
	if fam == nil {
		names := make([]string, 0, len(fams))
		for n := range fams {
			if strings.HasPrefix(n, "lfp_") {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		t.Errorf("%s: /metrics lacks %s (has %v)", who, name, names)
		return
	}
	if fam.GetType() != typ {
		t.Errorf("%s: %s is a %v, want %v", who, name, fam.GetType(), typ)
	}
}
