package runcmd

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// TestRunRefusesFlagsThatDoNothing: --election without --server, and the flags of the
// election's HTTP API with one (run serves only health and metrics then), are usage errors
// naming the flags, before anything contends.
func TestRunRefusesFlagsThatDoNothing(t *testing.T) {
	store := "file://" + t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"election without server", []string{"--store", store, "--namespace", "jobs", "--holder-id", "a", "--election", "nightly-report"}, "--election does nothing without --server"},
		{"keep-alive with server", []string{"--server", "http://127.0.0.1:1", "--election", "nightly-report", "--keep-alive-ms", "1000"}, "--keep-alive-ms does nothing with --server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runInProcess(t, nil, append(tc.args, "--", self(t))...)
			if code != cmdutil.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "contending") {
				t.Fatalf("exit %d, want 2 naming %q:\n%s", code, tc.want, stderr)
			}
		})
	}
}

// TestRunListenInUse: a listen address another process holds is a usage error that suggests
// --listen off or another port, before contending starts.
func TestRunListenInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, stderr := runInProcess(t, nil, "--store", "file://"+t.TempDir(), "--namespace", "jobs", "--holder-id", "a", "--listen", busy.Addr().String(), "--", self(t))
	for _, want := range []string{"is in use by another process", "--listen off", "flag --listen"} {
		if code != cmdutil.ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	if strings.Contains(stderr, "contending") {
		t.Errorf("run contended with its listen address taken:\n%s", stderr)
	}
}

// TestFollowersLogWhoLeads: a follower logs the leader whenever holder or fence changes, and
// nothing for renewals of the same term or for its own term.
func TestFollowersLogWhoLeads(t *testing.T) {
	var buf bytes.Buffer
	l := &leaderLog{log: slog.New(slog.NewTextHandler(&buf, nil)), self: lease.Identity{HolderID: "me"}}
	held := func(holder string, fence uint64) lease.Snapshot {
		return lease.Snapshot{Record: lease.Record{Namespace: "jobs", HolderID: holder, Fence: fence}, Exists: true, Acquired: true}
	}
	l.onState(held("alice", 5))
	l.onState(held("alice", 5)) // a renewal
	l.onState(lease.Snapshot{Record: lease.Record{Namespace: "jobs", Fence: 5}, Exists: true})
	l.onState(held("me", 6))
	l.onState(held("bob", 7))
	got := buf.String()
	if n := strings.Count(got, "msg=following"); n != 2 || !strings.Contains(got, "leader_holder_id=alice") || !strings.Contains(got, "leader_holder_id=bob leader_task_id=\"\" leader_fence=7") {
		t.Fatalf("%d following lines:\n%s", n, got)
	}
	if strings.Count(got, "following: no leader") != 1 || strings.Contains(got, "leader_holder_id=me") {
		t.Fatalf("log:\n%s", got)
	}
}
