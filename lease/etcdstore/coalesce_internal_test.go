package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
)

func testStore(t *testing.T) *Store {
	t.Helper()
	s, err := New(Options{Endpoints: []string{etcdtest.Embedded(t)}, Prefix: "/" + strings.ReplaceAll(t.Name(), "/", "-"), RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestMergedTransactionsKeepTheirOwnOutcomes: transactions queued together go as one request,
// and each caller gets its own conditions' outcome, its own reads, and the merged revision.
func TestMergedTransactionsKeepTheirOwnOutcomes(t *testing.T) {
	s := testStore(t)
	var requests atomic.Int64
	s.OnRequest(func(string, time.Duration, error) { requests.Add(1) })
	key := func(i int) string { return fmt.Sprintf("%s/k%02d", s.opts.Prefix, i) }
	c := s.writes
	const n = 20
	var queued []*pendingTxn
	for i := range n {
		// Even ones may only create their key; odd ones need a version it never had.
		cmp := clientv3.Compare(clientv3.ModRevision(key(i)), "=", 0)
		if i%2 == 1 {
			cmp = clientv3.Compare(clientv3.ModRevision(key(i)), "=", 999999)
		}
		queued = append(queued, newPendingTxn([]clientv3.Cmp{cmp},
			[]clientv3.Op{clientv3.OpPut(key(i), "v")}, []clientv3.Op{clientv3.OpGet(key(i))}))
	}
	c.queue = append(c.queue, queued...)
	batch := c.take()
	if len(batch) != n || len(c.queue) != 0 {
		t.Fatalf("took %d of %d transactions on disjoint keys, %d left", len(batch), n, len(c.queue))
	}
	c.commit(batch)
	if got := requests.Load(); got != 1 {
		t.Fatalf("%d transactions merged made %d requests, want 1", n, got)
	}
	for i, p := range queued {
		<-p.done
		if p.err != nil {
			t.Fatalf("transaction %d: %v", i, p.err)
		}
		if want := i%2 == 0; p.res.Succeeded != want || p.res.Revision == 0 {
			t.Fatalf("transaction %d: succeeded %v at revision %d, want %v", i, p.res.Succeeded, p.res.Revision, want)
		}
		if i%2 == 0 {
			// The merged revision is every key's mod revision: what the rooms remember.
			got, err := s.cli.Get(context.Background(), key(i))
			if err != nil || len(got.Kvs) != 1 || got.Kvs[0].ModRevision != p.res.Revision {
				t.Fatalf("transaction %d: key at %v (%v), want mod revision %d", i, got, err, p.res.Revision)
			}
		}
		if i%2 == 1 && (len(p.res.Responses) != 1 || p.res.Responses[0].GetResponseRange() == nil) {
			t.Fatalf("transaction %d: its else branch's read is missing: %v", i, p.res.Responses)
		}
	}
	resp, err := s.cli.Get(context.Background(), s.opts.Prefix+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != n/2 {
		t.Fatalf("%d keys stored, want the %d whose conditions held", len(resp.Kvs), n/2)
	}
}

// TestMergesStayWithinWhatEtcdAccepts: a key in two transactions, or more operations than etcd
// takes in one request, split the merge; what is left goes in the next one.
func TestMergesStayWithinWhatEtcdAccepts(t *testing.T) {
	c := &coalescer{}
	put := func(keys ...string) *pendingTxn {
		var ops []clientv3.Op
		for _, k := range keys {
			ops = append(ops, clientv3.OpPut(k, "v"))
		}
		return newPendingTxn(nil, ops, nil)
	}
	c.queue = []*pendingTxn{put("a"), put("b"), put("a"), put("c")}
	if b := c.take(); len(b) != 3 || len(c.queue) != 1 || c.queue[0].keys[0] != "a" {
		t.Fatalf("a key in two transactions: merged %d, left %d; want 3 merged and the second a left", len(b), len(c.queue))
	}
	ops := func(prefix string, n int) []string {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return keys
	}
	// etcd counts the merged transactions plus the largest one's operations against its limit.
	c.queue = []*pendingTxn{put(ops("big", maxTxnOps-1)...), put(ops("other", maxTxnOps-1)...)}
	if b := c.take(); len(b) != 1 || len(c.queue) != 1 {
		t.Fatalf("two transactions of %d operations: merged %d, left %d; want 1 and 1", maxTxnOps-1, len(b), len(c.queue))
	}
	c.queue = []*pendingTxn{put(ops("big", 60)...), put(ops("other", 60)...)}
	if b := c.take(); len(b) != 2 {
		t.Fatalf("two transactions of 60 operations: merged %d, want 2 (2+60 is within %d)", len(b), maxTxnOps)
	}
	var small []*pendingTxn
	for i := range maxTxnOps {
		small = append(small, put(fmt.Sprintf("s%d", i)))
	}
	c.queue = small
	b := c.take()
	if len(b)+1 > maxTxnOps || len(c.queue) == 0 {
		t.Fatalf("%d one-operation transactions: merged %d, left %d; want at most %d merged", maxTxnOps, len(b), len(c.queue), maxTxnOps-1)
	}
}

// TestMergedReadsStayReads: reads merged into one request are one flat read-only transaction —
// served from etcd's read index, no Raft entry — and each caller gets its own ranges.
func TestMergedReadsStayReads(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	for i := range 3 {
		if _, err := s.cli.Put(ctx, fmt.Sprintf("%s/r%d", s.opts.Prefix, i), fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	raftIndex := func() uint64 {
		st, err := s.cli.Status(ctx, s.opts.Endpoints[0])
		if err != nil {
			t.Fatal(err)
		}
		return st.RaftIndex
	}
	var requests atomic.Int64
	s.OnRequest(func(op string, _ time.Duration, _ error) {
		if op == "Txn" {
			requests.Add(1)
		}
	})
	before := raftIndex()
	c := s.reads
	var queued []*pendingTxn
	for i := range 3 {
		queued = append(queued, newPendingTxn(nil, []clientv3.Op{
			clientv3.OpGet(fmt.Sprintf("%s/r%d", s.opts.Prefix, i)), clientv3.OpGet(s.opts.Prefix + "/none")}, nil))
	}
	c.queue = append(c.queue, queued...)
	c.commit(c.take())
	if after := raftIndex(); after != before {
		t.Fatalf("a merged read moved the Raft index %d → %d: it went through Raft as a write", before, after)
	}
	if got := requests.Load(); got != 1 {
		t.Fatalf("three reads merged made %d transactions, want 1", got)
	}
	for i, p := range queued {
		if p.err != nil || len(p.res.Responses) != 2 {
			t.Fatalf("read %d: %d responses, %v; want its 2", i, len(p.res.Responses), p.err)
		}
		kvs := p.res.Responses[0].GetResponseRange().Kvs
		if len(kvs) != 1 || string(kvs[0].Value) != fmt.Sprint(i) || len(p.res.Responses[1].GetResponseRange().Kvs) != 0 {
			t.Fatalf("read %d got %v and %v, want its own key and nothing", i, kvs, p.res.Responses[1])
		}
	}
}

// TestAQueuedTransactionWhoseCallerGaveUpIsNeverSent: a caller whose context ends while its
// write waits behind another takes it back; the error says it was never proposed, so the
// outcome is not unknown.
func TestAQueuedTransactionWhoseCallerGaveUpIsNeverSent(t *testing.T) {
	s := testStore(t)
	c := s.writes
	key := s.opts.Prefix + "/given-up"
	c.mu.Lock()
	c.inFlight = 1 // as if a merged transaction were outstanding: the next one queues
	c.lastSent = time.Now()
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var res txnResult
	go func() {
		var err error
		res, err = c.do(ctx, nil, []clientv3.Op{clientv3.OpPut(key, "v")}, nil)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		queued := len(c.queue)
		c.mu.Unlock()
		if queued == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the write never queued")
		}
		time.Sleep(time.Millisecond) // polling for the queue, with a deadline
	}
	cancel()
	err := <-done
	if !errors.Is(err, errNotSent) || !notProposed(err) {
		t.Fatalf("error = %v; want one saying it was never sent", err)
	}
	if res.Unsettled || errors.Is(classify("write rooms", key, err, res.Unsettled), lease.ErrAmbiguous) {
		t.Fatalf("a write never sent is classified ambiguous: %v", classify("write rooms", key, err, res.Unsettled))
	}
	c.mu.Lock()
	left := len(c.queue)
	c.inFlight = 0
	c.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d transactions left queued after their caller gave up", left)
	}
	if got, err := s.cli.Get(context.Background(), key); err != nil || len(got.Kvs) != 0 {
		t.Fatalf("the key of the write taken back: %v, %v; want absent", got, err)
	}
}
