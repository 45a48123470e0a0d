package lease_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

func TestAnIncarnationReadsBackAsWritten(t *testing.T) {
	for _, inc := range []lease.Incarnation{
		{},
		{ID: "a"},
		{ID: "b", Boot: "0b6e", Lock: lease.FileID{Dev: 66306, Ino: 12, Path: "/run/x y/z:1.lock"}, Container: "4f1c"},
		{ID: "c", Boot: "0b6e", PID: 4242, PIDStart: 123456, PIDNS: 4026531836, PIDGroup: 4200},
	} {
		got, err := lease.ParseIncarnation(inc.String())
		if err != nil || got != inc {
			t.Errorf("%q read back as %+v, %v; want %+v", inc.String(), got, err, inc)
		}
	}
	for _, bad := range []string{"%zz", "boot=x", "id=a&lock=1:2", "id=a&lock=x:2:/p", "id=a&pid=1:2:3", "id=a&pid=-1:2:3:4", "id=a&pid=1:2:3:0"} {
		if got, err := lease.ParseIncarnation(bad); err == nil {
			t.Errorf("%q read as %+v, want an error", bad, got)
		}
	}
}

// laterWitness proves a holder gone once gone is set, and asks to be asked again every 10 ms
// until then; it counts the questions.
type laterWitness struct {
	gone  atomic.Bool
	asked atomic.Int64
}

func (w *laterWitness) Gone(context.Context, lease.Record) (string, time.Duration) {
	w.asked.Add(1)
	if w.gone.Load() {
		return "test: gone now", 0
	}
	return "", 10 * time.Millisecond
}

// loadCounter counts the reads made through it.
type loadCounter struct {
	*memstore.Store
	loads atomic.Int64
}

func (s *loadCounter) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx, ns)
}

// TestARestartedContenderTakesOverOnEvidenceWithoutWaitingForItsPoll: a contender restarted
// under the same identity leaves its predecessor's live term alone, asks a witness that can tell
// without a store request every 10 ms, and takes over as soon as the witness proves the
// predecessor gone — not at its next poll (an hour away), nor at the term's expiry (30 s) — and
// the waiting costs no store reads.
func TestARestartedContenderTakesOverOnEvidenceWithoutWaitingForItsPoll(t *testing.T) {
	mem := memstore.New()
	pred, err := lease.New(mem, "jobs", lease.Identity{HolderID: "c1"}, lease.WithTTL(30*time.Second),
		lease.WithIncarnation(lease.Incarnation{ID: "predecessor"}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := pred.TryAcquire(context.Background())
	if err != nil || !res.Acquired {
		t.Fatal(res, err)
	}
	store := &loadCounter{Store: mem}
	w := &laterWitness{}
	rec := &takeoverRecorder{}
	e, err := lease.New(store, "jobs", lease.Identity{HolderID: "c1"}, lease.WithTTL(30*time.Second), lease.WithWitness(w), lease.WithRecorder(rec))
	if err != nil {
		t.Fatal(err)
	}
	following := make(chan struct{}, 1)
	c, err := lease.NewContender(lease.Contender{Election: e, PollInterval: time.Hour, Logger: quiet,
		OnState: func(s lease.Snapshot) {
			if s.Incarnation == res.Grant.Incarnation {
				lease.Signal(following)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	terms, lead := termsLed()
	go c.Run(ctx, lead)
	within(t, following, 2*time.Second, "the restarted contender to follow its predecessor's term")
	loads, asked := store.loads.Load(), w.asked.Load()
	for deadline := time.Now().Add(2 * time.Second); w.asked.Load() < asked+5; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the witness was asked %d times in 2 s, want it asked again every 10 ms", w.asked.Load()-asked)
		}
	}
	select {
	case term := <-terms:
		t.Fatalf("took the predecessor's live term (fence %d) without evidence", term.Grant.Fence)
	default:
	}
	if n := store.loads.Load() - loads; n != 0 {
		t.Fatalf("%d store reads while only the witness was asked", n)
	}
	proven := time.Now()
	w.gone.Store(true)
	term := within(t, terms, time.Second, "the term taken on evidence")
	if took := time.Since(proven); took > 200*time.Millisecond {
		t.Fatalf("took over %v after the proof", took)
	}
	if term.Grant.Fence != res.Grant.Fence+1 || term.Grant.Incarnation != e.Incarnation() || e.Incarnation() == "" {
		t.Fatalf("term %+v, want fence %d under the contender's own incarnation %q", term.Grant.Record, res.Grant.Fence+1, e.Incarnation())
	}
	if got := rec.evidence(); len(got) != 1 || got[0] != "test: gone now" {
		t.Fatalf("takeovers recorded: %q, want one, on the witness's evidence", got)
	}
}

// takeoverRecorder keeps the evidence of every takeover reported to it.
type takeoverRecorder struct {
	mu    sync.Mutex
	taken []string
}

func (*takeoverRecorder) Renewed(time.Duration, error) {}
func (*takeoverRecorder) Conflict()                    {}
func (*takeoverRecorder) StoreError(string)            {}
func (*takeoverRecorder) Leading(uint64, bool)         {}

func (r *takeoverRecorder) TookOver(evidence string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.taken = append(r.taken, evidence)
}

func (r *takeoverRecorder) evidence() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.taken)
}

// onlyGone proves gone the holders of one incarnation.
type onlyGone string

func (w onlyGone) Gone(_ context.Context, rec lease.Record) (string, time.Duration) {
	if rec.Incarnation == string(w) {
		return "test: " + string(w) + " is gone", 0
	}
	return "", 0
}

// TestAHandoverSkipsItsOwnIdentityAndTheProvenGone: the successors listed first — a
// registration under the leader's own identity (its killed predecessor's, left until it lapses)
// and one whose process a witness proves gone — are passed over: the term goes to the next.
func TestAHandoverSkipsItsOwnIdentityAndTheProvenGone(t *testing.T) {
	mem := memstore.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ghosts := []lease.Successor{
		{Identity: lease.Identity{HolderID: "a"}, TTL: handoverTTL, Token: lease.NewSuccessorToken(), Incarnation: lease.Incarnation{ID: "pred"}.String()},
		{Identity: lease.Identity{HolderID: "c"}, TTL: handoverTTL, Token: lease.NewSuccessorToken(), Incarnation: lease.Incarnation{ID: "dead"}.String()},
		{Identity: lease.Identity{HolderID: "b"}, TTL: handoverTTL, Token: lease.NewSuccessorToken(), Incarnation: lease.Incarnation{ID: "live"}.String()},
	}
	for i, s := range ghosts {
		go func() { _ = mem.RegisterSuccessor(ctx, "jobs", s) }()
		awaitSuccessors(t, mem, i+1, "registration "+s.Identity.HolderID)
	}
	e, err := lease.New(mem, "jobs", lease.Identity{HolderID: "a"}, lease.WithTTL(handoverTTL),
		lease.WithWitness(onlyGone(lease.Incarnation{ID: "dead"}.String())))
	if err != nil {
		t.Fatal(err)
	}
	c, err := lease.NewContender(lease.Contender{Election: e, PollInterval: 50 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	terms, lead := termsLed()
	go func() { done <- c.Run(runCtx, lead) }()
	within(t, terms, 2*time.Second, "a's term")
	stop()
	if err := within(t, done, 5*time.Second, "a to stop"); err != nil {
		t.Fatal(err)
	}
	rec, _, err := mem.Load(ctx, "jobs")
	if err != nil || rec.Handover.To != ghosts[2].Token || rec.HolderID != "b" || rec.Incarnation != ghosts[2].Incarnation {
		t.Fatalf("the record after a stepped down: %+v, %v; want b's term, handed to its registration, under its incarnation", rec, err)
	}
}
