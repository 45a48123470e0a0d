package etcdstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
)

// The way requests reach the members, on a real etcd reached as two members (both endpoints one
// server), the first of which loses its answers: it passes each request on to etcd, or not, and
// then answers nothing, as a member frozen before or after it acted would.

// silentKV is a member's KV that answers nothing: it sends each request (applies) or drops it,
// then waits for the request's end.
type silentKV struct {
	clientv3.KV
	applies bool
	calls   chan struct{} // receives a value per request
}

func (k *silentKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	k.calls <- struct{}{}
	if k.applies {
		_, _ = k.KV.Do(context.WithoutCancel(ctx), op)
	}
	<-ctx.Done()
	return clientv3.OpResponse{}, ctx.Err()
}

// twoMembers is a store of two members with one etcd behind both.
func twoMembers(t *testing.T) (*Store, string) {
	t.Helper()
	ep := etcdtest.Embedded(t)
	s, err := New(Options{Endpoints: []string{ep, ep}, Prefix: "/" + strings.ReplaceAll(t.Name(), "/", "-")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, ep
}

// silence makes the first member of s answer nothing from now on (applying what it is sent
// when applies), and the next request go to it first.
func silence(s *Store, applies bool) *silentKV {
	m := s.members.list[0]
	silent := &silentKV{KV: m.kv, applies: applies, calls: make(chan struct{}, 100)}
	m.kv = silent
	s.members.turn.Store(uint32(len(s.members.list) - 1))
	return silent
}

func record(ns string, fence uint64) lease.Record {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return lease.Record{Namespace: ns, HolderID: "h", Fence: fence, AcquiredAt: now, RenewedAt: now, ExpiresAt: now.Add(time.Minute), TTL: time.Minute}
}

// TestAStalledMemberIsTriedLast: a read that its first member leaves unanswered goes to the next
// member after the stall bound and is answered from there; the member is marked, and the next
// requests go to the other member first, without waiting.
func TestAStalledMemberIsTriedLast(t *testing.T) {
	s, _ := twoMembers(t)
	ctx := context.Background()
	if _, err := s.Create(ctx, record("e", 1)); err != nil {
		t.Fatal(err)
	}
	silent := silence(s, false)
	began := time.Now()
	if _, _, err := s.Load(ctx, "e"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < stallAfter || took > maxStall+time.Second {
		t.Fatalf("a read whose first member is silent took %v; want the stall bound (%v to %v) and an answer", took, stallAfter, maxStall)
	}
	if len(silent.calls) == 0 {
		t.Fatal("the silent member was never asked: the test tested nothing")
	}
	if s.members.list[0].failedSince(time.Now()).IsZero() {
		t.Fatal("the member that left a request unanswered is not marked as failed")
	}
	for len(silent.calls) > 0 {
		<-silent.calls
	}
	for i := range 10 {
		began := time.Now()
		if _, _, err := s.Load(ctx, "e"); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took >= stallAfter {
			t.Fatalf("read %d took %v after the silent member failed: it was tried first again", i, took)
		}
	}
	if n := len(silent.calls); n != 0 {
		t.Fatalf("%d reads went to the member that failed, within %v of its failure", n, failedFor)
	}
}

// TestAWriteAnsweredByAnotherCopy: a conditional write whose first copy applied but was never
// answered is sent again to the other member, which refuses it — the record changed — but holds
// the write's own value: the write succeeded, at that version. Had another writer changed the
// record since, the refusal would prove nothing: the write's outcome is unknown.
func TestAWriteAnsweredByAnotherCopy(t *testing.T) {
	for _, overwritten := range []bool{false, true} {
		t.Run(map[bool]string{false: "applied", true: "overwritten"}[overwritten], func(t *testing.T) {
			s, ep := twoMembers(t)
			ctx := context.Background()
			ver, err := s.Create(ctx, record("e", 1))
			if err != nil {
				t.Fatal(err)
			}
			silent := silence(s, true)
			if overwritten {
				// Another writer acts as soon as the silent member has passed the write on.
				other, err := New(Options{Endpoints: []string{ep}, Prefix: s.opts.Prefix})
				if err != nil {
					t.Fatal(err)
				}
				defer other.Close()
				overwrote := make(chan error, 1)
				go func() {
					<-silent.calls
					for {
						rec, v, err := other.Load(ctx, "e")
						if err == nil && rec.Fence == 2 {
							_, err = other.Update(ctx, record("e", 3), v)
							overwrote <- err
							return
						}
						time.Sleep(time.Millisecond) // until the silent member's write has applied
					}
				}()
				defer func() {
					if err := <-overwrote; err != nil {
						t.Error(err)
					}
				}()
			}
			next := record("e", 2)
			got, err := s.Update(ctx, next, ver)
			if overwritten {
				if !errors.Is(err, lease.ErrAmbiguous) {
					t.Fatalf("a refusal while an unanswered copy may have applied: %v, want ErrAmbiguous", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("update whose first copy applied unanswered: %v", err)
			}
			rec, cur, err := s.Load(ctx, "e")
			if err != nil || cur != got || !rec.Equal(next) {
				t.Fatalf("stored %+v at %d (%v); the update said version %d", rec, cur, err, got)
			}
		})
	}
}
