package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// The elections API as a `serve` process runs it: out of the box (no settings but a listen
// address), across a restart, and with its settings. The full wire contract is checked by the
// conformance suite (server/electionstest) on every store.

// electionReply is an elections API answer, decoded loosely.
type electionReply struct {
	Status      string `json:"status"`
	ElectionID  string `json:"election_id"`
	LeaderToken string `json:"leader_token"`
	Code        string `json:"code"`
	Leader      *struct {
		CandidateID string `json:"candidate_id"`
		Term        uint64 `json:"term"`
		ExpiresAt   string `json:"expires_at"`
	} `json:"leader"`
	PreviousTerm   uint64 `json:"previous_term"`
	RetryAfterMS   int64  `json:"retry_after_ms"`
	RenewAfterMS   int64  `json:"renew_after_ms"`
	Error, Details string
	RequestID      string `json:"request_id"`
}

// postElection POSTs a JSON body to base+path and decodes the answer.
func postElection(t *testing.T, base, path, body string) (int, electionReply) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(http.MethodPost, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	checkRequestID(t, resp, "POST "+path)
	var out electionReply
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("POST %s: %d, body not JSON: %v", path, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// TestServeElectionsOutOfTheBox is the README's Quickstart: `serve` with nothing configured
// keeps rooms in the embedded file store under the default data directory, which outlives the
// process: after a restart the room still has its leader, and the next term is higher.
func TestServeElectionsOutOfTheBox(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "SWARM_LEASE_LISTEN=127.0.0.1:0"}
	srv := startServe(t, env, "out of the box")
	if !strings.Contains(srv.out.String(), filepath.Join(home, ".local", "share", "lfp-swarm-lease")) {
		t.Fatalf("serve does not name its default data directory:\n%s", srv.out.String())
	}

	code, created := postElection(t, srv.base, "/elections", "")
	if code != http.StatusCreated || len(created.ElectionID) != 32 {
		t.Fatalf("create: %d %+v", code, created)
	}
	room := "/elections/" + created.ElectionID
	code, won := postElection(t, srv.base, room+"/campaign", `{"candidate_id":"worker-a","ttl_seconds":30}`)
	if code != http.StatusOK || won.Status != "leader" || len(won.LeaderToken) != 43 {
		t.Fatalf("campaign: %d %+v", code, won)
	}
	if code, f := postElection(t, srv.base, room+"/campaign", `{"candidate_id":"worker-b"}`); code != http.StatusOK || f.Status != "follower" || f.LeaderToken != "" {
		t.Fatalf("second candidate: %d %+v", code, f)
	}
	// The watch stream starts with the leader and never carries the token.
	first := firstWatchFrame(t, srv.base+room+"/watch")
	if !strings.Contains(first, `"candidate_id":"worker-a"`) || strings.Contains(first, won.LeaderToken) {
		t.Fatalf("first watch frame: %s", first)
	}
	// Without a namespace there are no controller endpoints.
	if resp, _ := call(t, http.MethodGet, srv.base+"/v1/state", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/v1/state without a namespace: %d", resp.StatusCode)
	}
	if ready := getJSON[map[string]string](t, srv.base+"/readyz"); ready["status"] != "ready" {
		t.Fatalf("/readyz: %v", ready)
	}

	// Restart: the room and its term survive in the data directory.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := srv.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM:\n%s", code, srv.out.String())
	}
	logs := srv.out.String()
	srv = startServe(t, env, "restarted")
	status := getJSON[electionReply](t, srv.base+room)
	if status.Status != "leader" || status.Leader == nil || status.Leader.Term != won.Leader.Term {
		t.Fatalf("status after restart: %+v, want the term %d", status, won.Leader.Term)
	}
	code, renewed := postElection(t, srv.base, room+"/renew", `{"leader_token":"`+won.LeaderToken+`"}`)
	if code != http.StatusOK || renewed.Leader.Term != won.Leader.Term {
		t.Fatalf("renew after restart: %d %+v", code, renewed)
	}
	code, resigned := postElection(t, srv.base, room+"/resign", `{"leader_token":"`+won.LeaderToken+`"}`)
	if code != http.StatusOK || resigned.PreviousTerm != won.Leader.Term {
		t.Fatalf("resign: %d %+v", code, resigned)
	}
	code, next := postElection(t, srv.base, room+"/campaign", `{"candidate_id":"worker-b"}`)
	if code != http.StatusOK || next.Status != "leader" || next.Leader.Term <= won.Leader.Term {
		t.Fatalf("campaign after resign: %d %+v, want a term above %d", code, next, won.Leader.Term)
	}
	// Tokens never reach the logs.
	for _, out := range []string{logs, srv.out.String()} {
		if strings.Contains(out, won.LeaderToken) || strings.Contains(out, next.LeaderToken) {
			t.Fatalf("a leader token is in the server's log:\n%s", out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "lfp-swarm-lease")); err != nil {
		t.Fatalf("default data directory: %v", err)
	}
}

// firstWatchFrame opens a watch stream and returns its first frame's data line.
func firstWatchFrame(t *testing.T, url string) string {
	t.Helper()
	resp, err := apiClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("watch: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() {
		if sc.Text() == "" {
			break
		}
		lines = append(lines, sc.Text())
	}
	if len(lines) != 3 || lines[0] != "event: state" || lines[1] != "retry: 1000" || !strings.HasPrefix(lines[2], "data: ") {
		t.Fatalf("first watch frame: %q", lines)
	}
	return lines[2]
}

// TestServeElectionsSettings: the switch that disables public elections, and invalid settings
// named with their source.
func TestServeElectionsSettings(t *testing.T) {
	store := fileStore(t)
	off := startServe(t, append([]string{"SWARM_LEASE_LISTEN=127.0.0.1:0", "SWARM_LEASE_ELECTIONS=off"}, store.env...), "elections off")
	if code, r := postElection(t, off.base, "/elections", ""); code != http.StatusForbidden || r.Code != "forbidden" {
		t.Fatalf("create with elections off: %d %+v", code, r)
	}
	for _, tc := range []struct{ env, want string }{
		{"SWARM_LEASE_TRUSTED_PROXIES=10.0.0.0/8,bogus", "invalid trusted_proxies"},
		{"SWARM_LEASE_ELECTIONS=maybe", "invalid elections"},
		{"SWARM_LEASE_ADMISSION_PER_MINUTE=-1", "invalid admission_per_minute"},
		{"SWARM_LEASE_ROOM_SHARDS=1000", "invalid room_shards"},
		{"SWARM_LEASE_WATCH_LIFETIME_MS=10", "invalid watch_lifetime_ms"},
		{"SWARM_LEASE_MAX_CONNECTIONS=10000000", "invalid max_connections 10000000"}, // more than the descriptor limit holds
		{"SWARM_LEASE_MAX_CONNECTIONS_PER_CLIENT=10000000", "invalid max_connections_per_client 10000000"},
	} {
		r := cli(t, append([]string{"SWARM_LEASE_LISTEN=127.0.0.1:0", tc.env}, store.env...), "serve")
		expectCode(t, r, 2, tc.env)
		name, _, _ := strings.Cut(tc.env, "=")
		if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, name) {
			t.Errorf("%s: the error does not name the setting and its source:\n%s", tc.env, r.stderr)
		}
	}
}

// TestServeElectionsSwarmReplicas: two serve processes on the Swarm store are two replicas of
// one elections service. A room won through one is renewed, read and resigned through the other
// after the first was killed: its state lives in Swarm, not in a replica.
func TestServeElectionsSwarmReplicas(t *testing.T) {
	store := swarmStore(t)
	ns := leasetest.Namespace(t)
	env := append([]string{"SWARM_LEASE_LISTEN=127.0.0.1:0", "SWARM_LEASE_ELECTIONS_NAMESPACE=" + ns}, store.env...)
	t.Cleanup(func() {
		for i := range rooms.DefaultShards {
			_ = exec.Command("docker", "-H", envValue(store.env, "DOCKER_HOST"), "service", "rm", swarmstore.RoomsShardName(ns, i)).Run()
		}
	})
	a := startServe(t, env, "replica a")
	b := startServe(t, env, "replica b")
	room := "/elections/" + rooms.NewRoomID()
	code, won := postElection(t, a.base, room+"/campaign", `{"candidate_id":"worker-a","ttl_seconds":30}`)
	if code != http.StatusOK || won.Status != "leader" {
		t.Fatalf("campaign through a: %d %+v", code, won)
	}
	if code, f := postElection(t, b.base, room+"/campaign", `{"candidate_id":"worker-b"}`); code != http.StatusOK || f.Status != "follower" || f.Leader.Term != won.Leader.Term {
		t.Fatalf("campaign through b: %d %+v", code, f)
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	a.wait(t, 10*time.Second)
	if st := getJSON[electionReply](t, b.base+room); st.Status != "leader" || st.Leader.Term != won.Leader.Term {
		t.Fatalf("status through b after a died: %+v", st)
	}
	if code, r := postElection(t, b.base, room+"/renew", `{"leader_token":"`+won.LeaderToken+`"}`); code != http.StatusOK || r.Leader.Term != won.Leader.Term {
		t.Fatalf("renew through b: %d %+v", code, r)
	}
	if code, r := postElection(t, b.base, room+"/resign", `{"leader_token":"`+won.LeaderToken+`"}`); code != http.StatusOK || r.PreviousTerm != won.Leader.Term {
		t.Fatalf("resign through b: %d %+v", code, r)
	}
	if code, r := postElection(t, b.base, room+"/campaign", `{"candidate_id":"worker-b"}`); code != http.StatusOK || r.Status != "leader" || r.Leader.Term <= won.Leader.Term {
		t.Fatalf("campaign after resign: %d %+v", code, r)
	}
}
