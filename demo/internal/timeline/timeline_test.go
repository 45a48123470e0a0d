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
