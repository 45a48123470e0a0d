package check_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// unknownAcquire is client's try-acquire in [call, ret] whose outcome is unknown.
func unknownAcquire(client int, call, ret int64) check.LeaseOp {
	o := op(client, leasetest.OpTryAcquire, 0, call, ret, false, 0)
	o.Unknown = true
	return o
}

// refusal is client's refused try-acquire in [call, ret], naming fence and holder.
func refusal(client int, call, ret int64, fence uint64, holder int) check.LeaseOp {
	o := op(client, leasetest.OpTryAcquire, 0, call, ret, false, fence)
	o.CurrentHolder = leasetest.IdentityKey(leasetest.ContenderIdentity(holder))
	return o
}

// The pattern of the quorum-loss run below, reduced: a term superseded seconds before a
// refusal that still names it, as a new Raft leader that has not applied its log answers.
func TestRefusalMayBeDecidedOnAStaleRead(t *testing.T) {
	const floor = 100
	ops := []check.LeaseOp{
		op(0, leasetest.OpTryAcquire, 0, 0, 1*s, true, floor+1),
		op(0, leasetest.OpTryAcquire, 0, 2*s, 3*s, true, floor+2), // supersedes floor+1 at 3 s
		refusal(2, 20*s, 21*s, floor+1, 0),                        // 17 s later: stale
		refusal(4, 22*s, 23*s, floor+2, 0),                        // current
	}
	_, stale, err := check.LeaseHistory(floor, ops, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := (check.Staleness{Refusals: 2, Stale: 1, Oldest: 17 * time.Second}); stale != want {
		t.Fatalf("staleness %+v, want %+v", stale, want)
	}
}

// A stale read explains old states, never impossible ones.
func TestRefusalsThatNoStaleReadExplains(t *testing.T) {
	const floor = 100
	window := int64(check.StaleReadWindow)
	won := op(0, leasetest.OpTryAcquire, 0, 0, 1*s, true, floor+1)
	next := op(0, leasetest.OpTryAcquire, 0, 2*s, 3*s, true, floor+2)
	renewedLater := op(0, leasetest.OpRenew, floor+1, window+3*s, window+4*s, true, floor+1)
	renewed := op(0, leasetest.OpRenew, floor+1, window+5*s, window+6*s, false, 0)
	for _, tc := range []struct {
		name string
		ops  []check.LeaseOp
		want string
	}{
		{"lacking more writes than the window", []check.LeaseOp{won, next, op(0, leasetest.OpRenew, floor+2, 3*s+window, 4*s+window, true, floor+2),
			refusal(2, 5*s+window, 6*s+window, floor+1, 0)}, "more than a stale read can lack"},
		{"a term won only later", []check.LeaseOp{refusal(2, 0, s/2, floor+1, 0), op(0, leasetest.OpTryAcquire, 0, s, 2*s, true, floor+1)}, "won only later"},
		{"a term never won", []check.LeaseOp{won, unknownAcquire(4, s, 2*s), refusal(2, 2*s, 3*s, floor+2, 0)}, "never won"},
		{"a term beyond every win", []check.LeaseOp{won, refusal(2, 2*s, 3*s, floor+2, 0)}, "beyond every term"},
		{"the caller itself", []check.LeaseOp{won, refusal(1, 2*s, 3*s, floor+1, 1)}, "naming the caller itself"},
		{"a term whose successor's outcome is unknown, lacking more writes than the window",
			[]check.LeaseOp{won, unknownAcquire(0, 2*s, 3*s), op(0, leasetest.OpTryAcquire, 0, 4*s, 5*s, true, floor+3),
				op(0, leasetest.OpRenew, floor+3, 6*s+window, 7*s+window, true, floor+3), refusal(2, 8*s+window, 9*s+window, floor+1, 0)},
			"more than a stale read can lack"},
		{"a renewal excused only by another identity's unknown try-acquire",
			[]check.LeaseOp{unknownAcquire(4, 0, s/2), won, renewedLater, renewed}, "caller's term was won"},
		{"the wrong holder", []check.LeaseOp{won, refusal(2, 2*s, 3*s, floor+1, 4)}, "wrong holder"},
		{"no term at all", []check.LeaseOp{refusal(2, 0, s, floor, 0)}, "no term was ever won"},
		{"a renewal of a term won more than the window's writes before", []check.LeaseOp{won, renewedLater, renewed}, "caller's term was won"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := check.LeaseHistory(floor, tc.ops, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// How old a stale read is in time is not bounded — the Swarm may have had no leader for
// longer than the window — as long as it lacks no more than the window's worth of confirmed
// writes.
func TestStaleReadAfterALongLeaderlessStretch(t *testing.T) {
	const floor = 100
	window := int64(check.StaleReadWindow)
	ops := []check.LeaseOp{
		op(0, leasetest.OpTryAcquire, 0, 0, 1*s, true, floor+1),
		op(0, leasetest.OpTryAcquire, 0, 2*s, 3*s, true, floor+2),
		op(0, leasetest.OpRenew, floor+2, 4*s, 5*s, true, floor+2),
		refusal(2, 10*s+window, 11*s+window, floor+1, 0),
	}
	_, stale, err := check.LeaseHistory(floor, ops, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if stale.Stale != 1 || stale.Lacked != 2*time.Second || stale.Oldest != time.Duration(7*s+window) {
		t.Fatalf("staleness %+v, want one stale refusal lacking 2 s of writes, %v old", stale, time.Duration(7*s+window))
	}
}

// A renewal refused on a stale read, within the window of its term's win, is explained.
func TestRenewalRefusedOnAStaleReadWithinTheWindow(t *testing.T) {
	const floor = 100
	ops := []check.LeaseOp{
		op(0, leasetest.OpTryAcquire, 0, 0, 1*s, true, floor+1),
		op(0, leasetest.OpRenew, floor+1, 5*s, 6*s, false, 0),
	}
	if _, _, err := check.LeaseHistory(floor, ops, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// The history of a CI run of TestQuorumLoss: after two of three managers were killed and one
// restarted, the surviving manager became Raft leader and, for 1.2 s, refused try-acquires
// naming a term superseded 16.5–18.1 s before (97 refusals). The rest of the history is
// linearizable; the check once failed it as a whole.
func TestQuorumLossHistoryWithStaleRefusals(t *testing.T) {
	const floor = 1796164788108917
	f, err := os.Open("testdata/quorum-loss-stale-reads.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var ops []check.LeaseOp
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		var o check.LeaseOp
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, o)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	res, stale, err := check.LeaseHistory(floor, ops, time.Minute)
	if err != nil || res != porcupine.Ok {
		t.Fatalf("%v: %v", res, err)
	}
	if stale.Stale != 97 || stale.Oldest < 18*time.Second || stale.Oldest > 19*time.Second || stale.Lacked > 10*time.Millisecond {
		t.Fatalf("staleness %v, want 97 stale refusals, the stalest by 18–19 s, lacking at most 10 ms of confirmed writes", stale)
	}
	t.Log(stale)
}
