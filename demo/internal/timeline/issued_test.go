package timeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/demo/ledger"
)

// issuedAnswer is one answer of Issued.
type issuedAnswer struct {
	issued uint64
	err    error
}

// askIssued calls Issued(fence) in the background, on a timeline whose clock stands at came.
func askIssued(tl *Timeline, came time.Time, fence uint64) <-chan issuedAnswer {
	tl.now = func() time.Time { return came }
	answer := make(chan issuedAnswer, 1)
	go func() {
		issued, err := tl.Issued(context.Background(), fence)
		answer <- issuedAnswer{issued, err}
	}()
	return answer
}

// askedForARead waits until Issued asks the follower for a read.
func askedForARead(t *testing.T, tl *Timeline) {
	t.Helper()
	select {
	case <-tl.hurry:
	case <-time.After(5 * time.Second):
		t.Fatal("Issued did not ask for a read of the state")
	}
}

func held(fence uint64) swarmlease.State {
	return swarmlease.State{Exists: true, Acquired: true, HolderID: "a", Fence: fence}
}

// A fence at or below the highest seen is issued for good: no read, no wait.
func TestIssuedFencesAreKnownAtOnce(t *testing.T) {
	tl := New()
	tl.Observe(held(7))
	tl.Observe(swarmlease.State{Exists: true, Fence: 7}) // the term ended: its fence stays issued
	for _, fence := range []uint64{1, 7} {
		if issued, err := tl.Issued(context.Background(), fence); err != nil || issued != 7 {
			t.Fatalf("Issued(%d) = %d, %v; want 7 at once", fence, issued, err)
		}
	}
}

// A new term's worker writes before the timeline saw the term: Issued reads the state at once
// and answers with the new fence, not a refusal.
func TestIssuedLearnsANewTerm(t *testing.T) {
	tl := New()
	tl.Observe(held(7))
	answer := askIssued(tl, time.Unix(1000, 0), 9)
	askedForARead(t, tl)
	tl.Observe(held(9))
	if a := <-answer; a.err != nil || a.issued != 9 {
		t.Fatalf("Issued(9) = %d, %v; want 9", a.issued, a.err)
	}
}

// A fence the election has not issued is known as such only from a read that began viewAge
// after the write came: a read before may come from a controller whose view is not fresh.
func TestIssuedRefusesOnlyFromAFreshEnoughView(t *testing.T) {
	tl := New()
	tl.Observe(held(7))
	came := time.Unix(1000, 0)
	answer := askIssued(tl, came, ledger.MaxFence)
	askedForARead(t, tl)
	tl.read(came.Add(viewAge - time.Millisecond))
	askedForARead(t, tl) // not decided: it asks again
	select {
	case a := <-answer:
		t.Fatalf("Issued answered %d, %v from a view that may be stale", a.issued, a.err)
	default:
	}
	tl.read(came.Add(viewAge))
	if a := <-answer; a.err != nil || a.issued != 7 {
		t.Fatalf("Issued(2^53-1) = %d, %v; want 7, the highest issued", a.issued, a.err)
	}
}

// With no read of the state in time, Issued says so instead of guessing.
func TestIssuedSaysWhenItCannotTell(t *testing.T) {
	tl := New()
	tl.Observe(held(7))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := tl.Issued(ctx, 8)
	if !errors.Is(err, ledger.ErrElectionUnknown) || !strings.Contains(err.Error(), "fence 8") {
		t.Fatalf("error %v, want ErrElectionUnknown naming fence 8", err)
	}
}
