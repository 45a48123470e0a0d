package timeline

import (
	"testing"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

func TestTransitions(t *testing.T) {
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tl := New()
	tl.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	started := time.Date(2026, 12, 1, 11, 59, 0, 0, time.UTC)
	held := func(holder string, fence uint64) swarmlease.State {
		return swarmlease.State{Exists: true, Acquired: true, HolderID: holder, TaskID: "t-" + holder, Fence: fence, AcquiredAt: &started}
	}
	expired := held("a", 7)
	expired.Acquired = false
	for _, s := range []swarmlease.State{
		{Exists: false},
		held("a", 7),
		held("a", 7), // a renewal, or a replayed state
		expired,      // a's lease ran out
		{Exists: true, Fence: 7},
		held("b", 8),
		held("b", 9), // a new term of the same holder
	} {
		tl.Observe(s)
	}
	got := tl.Recent()
	want := []Transition{
		{Kind: Term, Fence: 9, HolderID: "b", TaskID: "t-b", At: started},
		{Kind: Term, Fence: 8, HolderID: "b", TaskID: "t-b", At: started},
		{Kind: Vacancy, Fence: 7, At: time.Date(2026, 12, 1, 12, 0, 1, 0, time.UTC)},
		{Kind: Term, Fence: 7, HolderID: "a", TaskID: "t-a", At: started},
	}
	if len(got) != len(want) {
		t.Fatalf("transitions %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("transition %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTransitionsAreBounded(t *testing.T) {
	tl := New()
	for f := uint64(1); f <= Max+10; f++ {
		tl.Observe(swarmlease.State{Exists: true, Acquired: true, HolderID: "a", Fence: f})
	}
	if got := tl.Recent(); len(got) != Max || got[0].Fence != Max+10 || got[Max-1].Fence != 11 {
		t.Fatalf("%d transitions, newest %d, oldest %d: want the latest %d", len(got), got[0].Fence, got[len(got)-1].Fence, Max)
	}
}

// TestAVacancyTheStreamDidNotShow: a crashed leader's lease lapses and a follower takes over at
// once, the stream telling of the new term only: the vacancy is recorded from the last term's
// latest expiry, which its renewals moved.
func TestAVacancyTheStreamDidNotShow(t *testing.T) {
	at := func(s int) *time.Time { v := time.Date(2026, 12, 1, 12, 0, s, 0, time.UTC); return &v }
	state := func(holder string, fence uint64, acquired, expires int) swarmlease.State {
		return swarmlease.State{Exists: true, Acquired: true, HolderID: holder, Fence: fence, AcquiredAt: at(acquired), ExpiresAt: at(expires)}
	}
	tl := New()
	tl.Observe(state("a", 7, 0, 5))
	tl.Observe(state("a", 7, 0, 8)) // a renewal, from a poll of /v1/state
	tl.Observe(state("a", 7, 0, 6)) // a poll's late answer
	tl.Observe(state("b", 8, 9, 14))
	tl.Observe(state("a", 7, 0, 8))   // a poll's late answer, after the next term
	tl.Observe(state("c", 9, 14, 19)) // b handed over at once: no vacancy
	released := state("c", 9, 14, 19)
	released.Acquired = false
	tl.Observe(released)
	tl.Observe(state("c", 9, 14, 19)) // a poll's late answer, after the vacancy
	got := tl.Recent()
	want := []Transition{
		{Kind: Vacancy, Fence: 9, At: tl.items[len(tl.items)-1].At},
		{Kind: Term, Fence: 9, HolderID: "c", At: *at(14)},
		{Kind: Term, Fence: 8, HolderID: "b", At: *at(9)},
		{Kind: Vacancy, Fence: 7, At: *at(8)},
		{Kind: Term, Fence: 7, HolderID: "a", At: *at(0)},
	}
	if len(got) != len(want) {
		t.Fatalf("transitions %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("transition %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
