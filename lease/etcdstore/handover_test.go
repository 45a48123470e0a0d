package etcdstore_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
)

// txnCounter counts a store's transactions (every write of the election) and reads from when it
// is armed.
type txnCounter struct {
	mu           sync.Mutex
	armed        bool
	txns, ranges int
}

func countTxns(s *etcdstore.Store) *txnCounter {
	c := &txnCounter{}
	s.OnRequest(func(op string, _ time.Duration, _ error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.armed {
			return
		}
		switch op {
		case "Txn":
			c.txns++
		case "Range":
			c.ranges++
		}
	})
	return c
}

func (c *txnCounter) arm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed, c.txns, c.ranges = true, 0, 0
}

func (c *txnCounter) count() (txns, ranges int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.txns, c.ranges
}

// TestContendersHandOverInOneWrite: two contenders on their own etcd clients. When the leader
// stops, its one transaction — the handover — starts the follower's term: the follower writes
// nothing before its term starts, its fence is above the leader's, and its registration is what
// the leader found. (That the follower takes the term from its watch without a read is
// TestAWatchedHandoverStartsWithoutARead's, in package lease, where no poll can interfere.)
func TestContendersHandOverInOneWrite(t *testing.T) {
	newS := sharedStore(t, etcdtest.Embedded(t))
	storeA, storeB := newS(t), newS(t)
	txnsA, txnsB := countTxns(storeA), countTxns(storeB)
	// A long renew interval: no renewal of a's falls between b's read of its term and the
	// handover, so b's read dates the handed term.
	const ttl, renew, poll = 30 * time.Second, 10 * time.Second, 10 * time.Second
	followed := make(chan struct{}, 1) // b read a's term
	contender := func(s *etcdstore.Store, holder string) *lease.Contender {
		e, err := lease.New(s, "handover", lease.Identity{HolderID: holder}, lease.WithTTL(ttl))
		if err != nil {
			t.Fatal(err)
		}
		c, err := lease.NewContender(lease.Contender{Election: e, RenewInterval: renew, PollInterval: poll,
			Logger: slog.New(slog.DiscardHandler), OnState: func(snap lease.Snapshot) {
				if holder == "b" && snap.HolderID == "a" {
					select {
					case followed <- struct{}{}:
					default:
					}
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	terms := make(chan *lease.Term, 2)
	lead := func(term *lease.Term) error { terms <- term; <-term.Done(); return nil }
	wait := func(what string) *lease.Term {
		select {
		case term := <-terms:
			return term
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s within 10 s", what)
			return nil
		}
	}

	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan error, 1)
	go func() { doneA <- contender(storeA, "a").Run(ctxA, lead) }()
	first := wait("term for a")
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	doneB := make(chan error, 1)
	go func() { doneB <- contender(storeB, "b").Run(ctxB, lead) }()
	select {
	case <-followed:
	case <-time.After(10 * time.Second):
		t.Fatal("b never read a's term")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		list, err := storeA.Successors(context.Background(), "handover")
		if err == nil && len(list) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("both contenders registered: %v, %v", list, err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	txnsA.arm()
	txnsB.arm()
	stopA()
	second := wait("term for b")
	if second.Grant.HolderID != "b" || second.Grant.Fence <= first.Grant.Fence || second.Grant.Handover.From == 0 {
		t.Fatalf("b's term %+v after a's %+v; want a handed term with a higher fence", second.Grant.Record, first.Grant.Record)
	}
	txns, ranges := txnsB.count()
	if txns != 0 {
		t.Errorf("b wrote %d times before its term started; want 0", txns)
	}
	t.Logf("b read %d times before its term started", ranges)
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	if txns, _ := txnsA.count(); txns != 1 {
		t.Errorf("a wrote %d times stepping down; want 1, the handover", txns)
	}
	if rem := second.Remaining(); rem <= ttl/3 || rem > ttl {
		t.Errorf("b's term has %v left; want between a third of the TTL and the TTL", rem)
	}
	// a's registration went with it.
	list, err := storeB.Successors(context.Background(), "handover")
	if err != nil || len(list) != 1 || list[0].Identity.HolderID != "b" {
		t.Errorf("successors after a stopped: %+v, %v; want b alone", list, err)
	}
	stopB()
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
}
