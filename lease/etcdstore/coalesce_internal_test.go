package etcdstore

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

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
