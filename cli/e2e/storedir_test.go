package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/faults/check"
)

// The file store's directory removed while processes use it (an operator's rm -rf): they go on
// as on a first start, on a recreated directory, and count the loss as store damage.

// TestRunRecoversRemovedStoreDirectory: two `run` processes share a file store; its directory
// is removed while one of them leads. The leader's command stops, a new term starts on the
// recreated directory with a fence above the lost one, never beside the lost term's command —
// without restarting either process — and
// the loss is logged and counted once, in lfp_swarm_lease_store_damage_total of the process
// that recreated the directory.
func TestRunRecoversRemovedStoreDirectory(t *testing.T) {
	env, childLog := fileRunEnv(t)
	store := strings.TrimPrefix(envValue(env, "SWARM_LEASE_STORE"), "file://")
	procs := []*apiProc{startRunAPI(t, env, "a"), startRunAPI(t, env, "b")}
	events := waitForEvents(t, childLog, 10*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	first := startsOf(events)[0]
	// The follower has read the leader's term: what it waits out when the directory is gone.
	// (A process that never saw the term — one started after the removal — cannot know of it.)
	for _, p := range procs {
		if p.name != "run "+first.HolderID {
			pollUntil(t, 10*time.Second, p.name+" to follow "+first.HolderID, func() (bool, string) {
				return strings.Contains(p.out.String(), "leader_holder_id="+first.HolderID), p.out.String()
			})
		}
	}

	removed := time.Now()
	removeDir(t, store)
	events = waitForEvents(t, childLog, 10*time.Second, "a child of a new term", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 2 })
	second := startsOf(events)[1]
	t.Logf("directory removed → new term (holder %s) in %v", second.HolderID, second.Time().Sub(removed).Round(time.Millisecond))
	if fenceOf(t, second) <= fenceOf(t, first) {
		t.Fatalf("fence %d on the recreated directory, but %d was granted before it was removed", fenceOf(t, second), fenceOf(t, first))
	}
	waitGone(t, first.PID, 5*time.Second, "the child of the lost term")
	// The lost term's holder learns of the loss at its next renewal; a contender that saw it
	// held takes the election's absence for that term until it expires: no overlap.
	checkOneChildAtATime(t, readChildEvents(t, childLog), nil)
	if files, _ := filepath.Glob(filepath.Join(store, "*.lease.json")); len(files) != 1 {
		t.Fatalf("election files in the recreated directory: %v", files)
	}

	// Counted once, by whichever process recreated the directory; logged by it.
	var counted string
	pollUntil(t, 5*time.Second, "the loss in lfp_swarm_lease_store_damage_total", func() (bool, string) {
		total, by := 0.0, ""
		for _, p := range procs {
			v, _ := metricValue(scrape(t, p.base), "lfp_swarm_lease_store_damage_total")
			total += v
			if v > 0 {
				by = p.name
			}
		}
		counted = by
		return total == 1, fmt.Sprint(total)
	})
	for _, p := range procs {
		if p.name != counted {
			continue
		}
		if out := p.out.String(); !strings.Contains(out, "damaged state found") || !strings.Contains(out, store) {
			t.Fatalf("%s counted the loss but did not log it naming %s:\n%s", p.name, store, out)
		}
	}
	// Both go on: neither exited, nor keeps failing.
	for _, p := range procs {
		select {
		case <-p.done:
			t.Fatalf("%s exited (%d):\n%s", p.name, p.cmd.ProcessState.ExitCode(), p.out.String())
		default:
		}
	}
}

// TestServeRecoversRemovedStoreDirectory: a `serve` process's rooms on a file store whose
// directory is removed: the leader's renewal learns the room is vacant (its lease was lost,
// and nothing says otherwise), a new campaign wins with a term above the lost one, and /readyz
// stays ready, reporting the loss in its details and in lfp_swarm_lease_store_damage_total.
func TestServeRecoversRemovedStoreDirectory(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	srv := startRemoteServer(t, store, "127.0.0.1:0")
	el := remoteClient(t, srv.base)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	room, err := el.CreateRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "worker-a", TTL: remoteTTL})
	if err != nil || !a.IsLeader() {
		t.Fatalf("campaign: %+v, %v", a, err)
	}

	removeDir(t, store)
	_, err = el.Renew(ctx, room.ID, a.Token, remoteTTL)
	expectCodeErr(t, err, "renewing a room lost with the directory", 404, swarmlease.ErrVacant)
	b, err := el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "worker-b", TTL: remoteTTL})
	if err != nil || !b.IsLeader() || b.Leader.Term <= a.Leader.Term {
		t.Fatalf("campaign on the recreated directory: %+v, %v; want a term above %d", b, err, a.Leader.Term)
	}
	if _, err := el.Renew(ctx, room.ID, b.Token, remoteTTL); err != nil {
		t.Fatalf("renewing the new term: %v", err)
	}

	resp, body := call(t, http.MethodGet, srv.base+"/readyz", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), store) {
		t.Fatalf("/readyz: %d %s, want ready with details naming %s", resp.StatusCode, body, store)
	}
	if v, _ := metricValue(scrape(t, srv.base), "lfp_swarm_lease_store_damage_total"); v != 1 {
		t.Fatalf("lfp_swarm_lease_store_damage_total %v, want 1", v)
	}
	if out := srv.out.String(); !strings.Contains(out, "damaged state found") {
		t.Fatalf("serve did not log the loss:\n%s", out)
	}
}

// removeDir removes the directory dir at once, as seen from its path, while processes write in
// it: moved aside, then removed (a plain recursive removal would race with their new files).
func removeDir(t *testing.T, dir string) {
	t.Helper()
	aside := dir + ".removed"
	if err := os.Rename(dir, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(aside); err != nil {
		t.Fatal(err)
	}
}
