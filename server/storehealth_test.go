package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// roomsServer is an elections-only server of namespace "health" on a file store in dir, as a
// `serve` process started on that directory would be.
type roomsServer struct {
	url     string
	logFile string
}

func startRoomsServer(t *testing.T, dir string) *roomsServer {
	t.Helper()
	store, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rooms.New(store, "health", rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	// A file: its writes are safe from every handler goroutine, and the test reads it back.
	logs, err := os.CreateTemp(t.TempDir(), "server-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	s, err := server.New(server.Options{Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Elections: &elections.Options{Rooms: m, AdmissionPerMinute: -1}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &roomsServer{url: ts.URL, logFile: logs.Name()}
}

// do sends method path with a JSON body (nil for none) and returns the answer and its body.
func (s *roomsServer) do(t *testing.T, method, path string, body any) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp, out
}

func (s *roomsServer) campaign(t *testing.T, room, candidate string) (*http.Response, map[string]any) {
	t.Helper()
	return s.do(t, http.MethodPost, "/elections/"+room+"/campaign", map[string]any{"candidate_id": candidate, "ttl_seconds": 30})
}

func (s *roomsServer) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

func termOf(t *testing.T, body map[string]any) float64 {
	t.Helper()
	leader, _ := body["leader"].(map[string]any)
	term, ok := leader["term"].(float64)
	if !ok {
		t.Fatalf("no leader term in %v", body)
	}
	return term
}

// TestDamagedSlotIsReported: a server restarted on a directory whose newest rooms slot was
// damaged serves the surviving slot with a new term above every acknowledged one, and reports
// the damage in its log (naming the file), in lfp_swarm_lease_store_damage_total and in
// /readyz's details.
func TestDamagedSlotIsReported(t *testing.T) {
	dir := t.TempDir()
	first := startRoomsServer(t, dir)
	room := rooms.NewRoomID()
	// Three writes of the room's shard: created (both slots), resigned (slot b), won again
	// (slot a, the newest).
	resp, a := first.campaign(t, room, "a")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("campaign a: %d %v", resp.StatusCode, a)
	}
	if resp, body := first.do(t, http.MethodPost, "/elections/"+room+"/resign", map[string]any{"leader_token": a["leader_token"]}); resp.StatusCode != http.StatusOK {
		t.Fatalf("resign a: %d %v", resp.StatusCode, body)
	}
	resp, b := first.campaign(t, room, "b")
	if resp.StatusCode != http.StatusOK || b["status"] != "leader" {
		t.Fatalf("campaign b: %d %v", resp.StatusCode, b)
	}
	slots, _ := filepath.Glob(filepath.Join(dir, "health.rooms-*.a"))
	if len(slots) != 1 {
		t.Fatalf("slots %v, want one shard", slots)
	}
	newest := slots[0]
	data, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"c":"b"`)) + len(`"c":"`)
	data[i] = 'x'
	if err := os.WriteFile(newest, data, 0o600); err != nil {
		t.Fatal(err)
	}

	restarted := startRoomsServer(t, dir)
	resp, c := restarted.campaign(t, room, "c")
	if resp.StatusCode != http.StatusOK || c["status"] != "leader" {
		t.Fatalf("campaign c after the damage: %d %v (the surviving slot has the room vacant)", resp.StatusCode, c)
	}
	if termOf(t, c) <= termOf(t, b) {
		t.Fatalf("term %.0f after the damage, but %.0f was acknowledged before it", termOf(t, c), termOf(t, b))
	}
	if log, _ := os.ReadFile(restarted.logFile); !bytes.Contains(log, []byte("level=ERROR")) || !bytes.Contains(log, []byte(newest)) {
		t.Errorf("the log does not name the damaged slot %s:\n%s", newest, log)
	}
	if m := restarted.metrics(t); !strings.Contains(m, "lfp_swarm_lease_store_damage_total 1\n") {
		t.Errorf("metrics do not count the damage:\n%s", grepLines(m, "damage"))
	}
	resp, ready := restarted.do(t, http.MethodGet, "/readyz", nil)
	if details, _ := ready["details"].(string); resp.StatusCode != http.StatusOK || !strings.Contains(details, newest) {
		t.Errorf("/readyz: %d %v, want ready with details naming %s", resp.StatusCode, ready, newest)
	}
}

func grepLines(text, word string) string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.Contains(line, word) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// TestFullDiskAnswers503AndRecovers: on a real file system that runs out of space, a campaign
// that needs a new shard and a renewal that needs a slot file answer 503 with Retry-After in
// the one error shape, /readyz answers 503, and once space returns the same server serves
// again by itself — no file to remove by hand.
func TestFullDiskAnswers503AndRecovers(t *testing.T) {
	dir := leasetest.SmallFS(t, "4m")
	srv := startRoomsServer(t, dir)
	shards, err := rooms.New(rooms.NewMemoryStore(), "health") // the server's shard mapping
	if err != nil {
		t.Fatal(err)
	}
	held := rooms.NewRoomID()
	resp, a := srv.campaign(t, held, "a")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("campaign: %d %v", resp.StatusCode, a)
	}
	fresh := rooms.NewRoomID()
	for shards.ShardOf(fresh) == shards.ShardOf(held) {
		fresh = rooms.NewRoomID()
	}
	// The held room's next write goes to slot b; without the file it must be created.
	slotB, _ := filepath.Glob(filepath.Join(dir, "health.rooms-*.b"))
	if len(slotB) != 1 {
		t.Fatalf("slots b: %v", slotB)
	}
	if err := os.Remove(slotB[0]); err != nil {
		t.Fatal(err)
	}
	filler := leasetest.Fill(t, dir)

	full := func(what string, resp *http.Response, body map[string]any) {
		t.Helper()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			body["code"] == nil || body["request_id"] == nil || body["retry_after_ms"] == nil {
			t.Errorf("%s on a full disk: %d Retry-After %q %v, want 503 with Retry-After in the error shape",
				what, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	resp, body := srv.campaign(t, fresh, "b")
	full("campaign", resp, body)
	if details, _ := body["details"].(string); details != "store_full" {
		t.Errorf("campaign details %q, want store_full", details)
	}
	resp, body = srv.do(t, http.MethodPost, "/elections/"+held+"/renew", map[string]any{"leader_token": a["leader_token"], "ttl_seconds": 30})
	full("renewal", resp, body)
	resp, body = srv.do(t, http.MethodGet, "/readyz", nil)
	full("/readyz", resp, body)
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if resp, body := srv.campaign(t, fresh, "b"); resp.StatusCode != http.StatusOK || body["status"] != "leader" {
		t.Errorf("campaign once space returned: %d %v", resp.StatusCode, body)
	}
	resp, body = srv.do(t, http.MethodPost, "/elections/"+held+"/renew", map[string]any{"leader_token": a["leader_token"], "ttl_seconds": 30})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("renewal once space returned: %d %v", resp.StatusCode, body)
	}
	if resp, body := srv.do(t, http.MethodGet, "/readyz", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz once space returned: %d %v", resp.StatusCode, body)
	}
}

// TestElectionStoreDamageIsReportedOnce: a server of an election and the elections API on one
// file store (serve with a namespace) counts damage of that store once, and a server of an
// election alone (run) counts it at all: the store's directory, removed and recreated by the
// next write, is one loss in lfp_swarm_lease_store_damage_total and in /readyz's details.
func TestElectionStoreDamageIsReportedOnce(t *testing.T) {
	for _, withRooms := range []bool{true, false} {
		t.Run(fmt.Sprintf("rooms=%v", withRooms), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			store, err := filestore.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			e, err := lease.New(store, "health", lease.Identity{HolderID: "a"}, lease.WithTTL(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			opts := server.Options{Election: e, Logger: slog.New(slog.DiscardHandler)}
			if withRooms {
				m, err := rooms.New(store, "health")
				if err != nil {
					t.Fatal(err)
				}
				opts.Elections = &elections.Options{Rooms: m, AdmissionPerMinute: -1}
			}
			s, err := server.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s.Handler())
			t.Cleanup(ts.Close)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if res, err := e.TryAcquire(t.Context()); err != nil || !res.Acquired {
				t.Fatalf("try-acquire on a removed directory: %+v, %v", res, err)
			}
			srv := &roomsServer{url: ts.URL}
			if m := srv.metrics(t); !strings.Contains(m, "lfp_swarm_lease_store_damage_total 1\n") {
				t.Errorf("metrics do not count the loss once:\n%s", grepLines(m, "damage"))
			}
			resp, ready := srv.do(t, http.MethodGet, "/readyz", nil)
			if details, _ := ready["details"].(string); resp.StatusCode != http.StatusOK || !strings.Contains(details, dir) {
				t.Errorf("/readyz: %d %v, want ready with details naming %s", resp.StatusCode, ready, dir)
			}
		})
	}
}
