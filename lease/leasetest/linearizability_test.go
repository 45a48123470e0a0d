package leasetest

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// The checkers are only worth something if they reject bad histories. These are written by hand,
// fences relative to floor, timestamps as small integers.
const floor = 1_000_000

var (
	c0, c1 = "node-0/task-0", "node-1/task-2"
	// sibling shares c0's holder ID (node) but is another task, hence another contender.
	sibling = "node-0/task-1"
)

func win(client int, who string, fence uint64, call, ret int64) Op {
	return Op{Client: client, Contender: who, Kind: OpTryAcquire, OK: true, ResultFence: floor + fence, Call: call, Return: ret}
}

func refused(client int, who, holder string, fence uint64, call, ret int64) Op {
	return Op{Client: client, Contender: who, Kind: OpTryAcquire, CurrentHolder: holder, ResultFence: floor + fence, Call: call, Return: ret}
}

func renew(client int, who string, fence uint64, ok bool, call, ret int64) Op {
	op := Op{Client: client, Contender: who, Kind: OpRenew, Fence: floor + fence, OK: ok, Call: call, Return: ret}
	if ok {
		op.ResultFence = op.Fence
	}
	return op
}

func release(client int, who string, fence uint64, ok bool, call, ret int64) Op {
	return Op{Client: client, Contender: who, Kind: OpRelease, Fence: floor + fence, OK: ok, Call: call, Return: ret}
}

// goodHistory is linearizable, including overlapping calls whose only valid order is not the
// order of their starts (c1 wins #2 inside c0's release of #1).
func goodHistory() []Op {
	return []Op{
		win(0, c0, 1, 0, 10),
		refused(1, c1, c0, 1, 5, 15),
		refused(2, sibling, c0, 1, 6, 16),
		renew(0, c0, 1, true, 20, 30),
		renew(1, c1, 1, false, 20, 30),
		renew(2, sibling, 1, false, 21, 31),
		release(0, c0, 1, true, 40, 60),
		win(1, c1, 2, 45, 55),
		renew(0, c0, 1, false, 70, 80),
		release(0, c0, 1, false, 81, 82),
		win(1, c1, 3, 90, 100), // the holder itself starts a new term
		renew(1, c1, 2, false, 110, 120),
		renew(1, c1, 3, true, 110, 120),
	}
}

func TestCheckersAcceptGoodHistory(t *testing.T) {
	ops := goodHistory()
	if err := CheckInvariants(floor, ops); err != nil {
		t.Errorf("CheckInvariants rejected a good history: %v", err)
	}
	if res, _ := CheckLinearizable(floor, ops, 10*time.Second); res != porcupine.Ok {
		t.Errorf("porcupine: %s for a good history", res)
	}
	if err := CheckFinalRecord(floor, ops, recordOf(c1, 3)); err != nil {
		t.Error(err)
	}
	if err := CheckFinalRecord(floor, ops, recordOf("", 3)); err == nil {
		t.Error("CheckFinalRecord accepted a released record although #3 was never released")
	}
}

func TestCheckersRejectBadHistories(t *testing.T) {
	for name, ops := range map[string][]Op{
		"two holders at once": {
			win(0, c0, 1, 0, 10),
			win(1, c1, 2, 20, 30), // c0 never released #1
		},
		"two tasks of one node at once": {
			win(0, c0, 1, 0, 10),
			win(2, sibling, 2, 20, 30), // same holder ID, other task: another contender
		},
		"stale renew accepted after a handover": {
			win(0, c0, 1, 0, 10),
			release(0, c0, 1, true, 20, 30),
			win(1, c1, 2, 40, 50),
			renew(0, c0, 1, true, 60, 70),
		},
		"stale renew accepted after the holder's own new term": {
			win(0, c0, 1, 0, 10),
			win(0, c0, 2, 20, 30),
			renew(0, c0, 1, true, 40, 50),
		},
		"renew accepted after release": {
			win(0, c0, 1, 0, 10),
			release(0, c0, 1, true, 20, 30),
			renew(0, c0, 1, true, 40, 50),
		},
		"renew accepted from another contender's fence": {
			win(0, c0, 1, 0, 10),
			renew(1, c1, 1, true, 20, 30),
		},
		"renew of the current term refused": {
			win(0, c0, 1, 0, 10),
			renew(0, c0, 1, false, 20, 30),
		},
		"fence going backwards": {
			win(0, c0, 2, 0, 10),
			release(0, c0, 2, true, 20, 30),
			win(1, c1, 1, 40, 50), // started after #2 was won, yet got #1
		},
		"fence reused": {
			win(0, c0, 1, 0, 10),
			release(0, c0, 1, true, 20, 30),
			win(1, c1, 1, 40, 50),
		},
		"fence skipped": {
			win(0, c0, 1, 0, 10),
			release(0, c0, 1, true, 20, 30),
			win(1, c1, 3, 40, 50),
		},
		"refused by a released lease": {
			win(0, c0, 1, 0, 10),
			release(0, c0, 1, true, 20, 30),
			refused(1, c1, c0, 1, 40, 50),
		},
		"refused by nobody": {
			refused(1, c1, c0, 0, 0, 10),
		},
	} {
		t.Run(name, func(t *testing.T) {
			if err := CheckInvariants(floor, ops); err == nil {
				t.Error("CheckInvariants accepted it")
			} else {
				t.Logf("CheckInvariants: %v", err)
			}
			if res, _ := CheckLinearizable(floor, ops, 10*time.Second); res != porcupine.Illegal {
				t.Errorf("porcupine: %s, want %s", res, porcupine.Illegal)
			}
		})
	}
}

func TestOpsRoundTripAsJSONLines(t *testing.T) {
	ops := goodHistory()
	var buf bytes.Buffer
	if err := WriteOps(&buf, ops); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != len(ops) {
		t.Fatalf("%d lines for %d operations", n, len(ops))
	}
	got, err := ReadOps(&buf)
	if err != nil || !reflect.DeepEqual(got, ops) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, ops)
	}
	if _, err := ReadOps(bytes.NewBufferString(`{"client":0,"surprise":1}` + "\n")); err == nil {
		t.Fatal("ReadOps accepted an unknown field")
	}
}

func recordOf(who string, fence uint64) lease.Record {
	rec := lease.Record{Fence: floor + fence}
	if who != "" {
		holder, task, _ := strings.Cut(who, "/")
		rec.HolderID, rec.NodeID, rec.TaskID = holder, holder, task
	}
	return rec
}

// staleStore is a broken store: it answers every Load with the first record it read, and writes
// without comparing versions — as a store with stale reads and no compare-and-swap would.
type staleStore struct {
	lease.Store
	first map[string]lease.Record
}

func (s *staleStore) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	if rec, ok := s.first[ns]; ok {
		return rec, 1, nil
	}
	rec, _, err := s.Store.Load(ctx, ns)
	if err == nil {
		s.first[ns] = rec
	}
	return rec, 1, err
}

func (s *staleStore) Update(ctx context.Context, rec lease.Record, _ lease.Version) (lease.Version, error) {
	_, ver, err := s.Store.Load(ctx, rec.Namespace)
	if err != nil {
		return 0, err
	}
	return s.Store.Update(ctx, rec, ver)
}

// TestCheckersCatchABrokenStore runs real contenders, one after the other, on a store that
// breaks every promise, and expects both checkers to reject what they recorded.
func TestCheckersCatchABrokenStore(t *testing.T) {
	ctx := t.Context()
	store := &staleStore{Store: memstore.New(), first: map[string]lease.Record{}}
	ns := Namespace(t)
	admin, err := NewContenderElection(store, ns, 0)
	if err != nil {
		t.Fatal(err)
	}
	initial, err := admin.Init(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for i := range 2 {
		e, err := NewContenderElection(store, ns, i)
		if err != nil {
			t.Fatal(err)
		}
		got, err := RunContender(ctx, e, ContenderConfig{Client: i, Ops: 50, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, got...)
	}
	t.Log(Summary(initial.Fence, ops))
	if err := CheckInvariants(initial.Fence, ops); err == nil {
		t.Error("CheckInvariants accepted the history of a broken store")
	} else {
		t.Logf("CheckInvariants: %.300v…", err)
	}
	if res, _ := CheckLinearizable(initial.Fence, ops, 10*time.Second); res != porcupine.Illegal {
		t.Errorf("porcupine: %s for the history of a broken store, want %s", res, porcupine.Illegal)
	}
}
