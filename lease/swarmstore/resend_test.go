package swarmstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// resendingStore is a store whose next armed create or update is sent twice, the second copy
// 600 ms after the first was answered, and answered with the second copy's reply: what a
// manager does when the connection to its Raft leader breaks after the first copy committed
// (it polls every 500 ms for a new leader and sends the same request again, which is then
// refused as a conflict). writes counts the creates and updates the store sends, a twice-sent
// one once. The test Swarm's engine is its only manager, which passes nothing on; the store
// tells the Swarm it talks to has three.
func resendingStore(t *testing.T, path string, armed *atomic.Bool, writes *atomic.Int32) *swarmstore.Store {
	t.Helper()
	return newStoreWithTransport(t, func(base http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/info") {
				return withManagers(t, base, r, 3)
			}
			if r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/update") || strings.HasSuffix(r.URL.Path, "/services/create")) {
				writes.Add(1)
			}
			if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, path) || !armed.CompareAndSwap(true, false) {
				return base.RoundTrip(r)
			}
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, err
			}
			r.Body.Close()
			send := func() (*http.Response, error) {
				c := r.Clone(r.Context())
				c.Body, c.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
				return base.RoundTrip(c)
			}
			first, err := send()
			if err != nil {
				return nil, err
			}
			_, _ = io.Copy(io.Discard, first.Body)
			first.Body.Close()
			if first.StatusCode >= 300 {
				t.Errorf("the first copy of %s was refused: %s", r.URL.Path, first.Status)
			}
			time.Sleep(600 * time.Millisecond) // the manager's wait for a new leader, not synchronisation
			second, err := send()
			if err == nil && second.StatusCode < 300 {
				t.Errorf("the second copy of %s was accepted: %s", r.URL.Path, second.Status)
			}
			return second, err
		})
	})
}

// TestResentWriteIsNotTakenAsRefused: the first copy of a write lands and the second, re-sent
// by a manager whose Raft leader changed, is refused as a conflict. The call's outcome is the
// first copy's: a try-acquire wins the next fence (not a second term after it), and a release
// succeeds (not "not the holder").
func TestResentWriteIsNotTakenAsRefused(t *testing.T) {
	t.Run("try-acquire that creates the election", func(t *testing.T) {
		var armed atomic.Bool
		var writes atomic.Int32
		e := newContender(t, resendingStore(t, "/services/create", &armed, &writes))
		armed.Store(true)
		res, err := e.TryAcquire(t.Context())
		if armed.Load() {
			t.Fatal("the try-acquire sent no create")
		}
		wantWonAndStored(t, e, res, err, "try-acquire whose create was sent twice")
		if n := writes.Load(); n != 1 {
			t.Errorf("the try-acquire made %d writes: after its create it started a second term", n)
		}
	})
	t.Run("init", func(t *testing.T) {
		var armed atomic.Bool
		e := newContender(t, resendingStore(t, "/services/create", &armed, new(atomic.Int32)))
		armed.Store(true)
		snap, err := e.Init(t.Context())
		if err != nil || !snap.Exists {
			t.Fatalf("init whose create was sent twice: exists=%v err=%v", snap.Exists, err)
		}
	})
	t.Run("resign of a room", func(t *testing.T) {
		var armed atomic.Bool
		m, err := rooms.New(resendingStore(t, "/update", &armed, new(atomic.Int32)), leasetest.Namespace(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Store().DeleteShards(context.Background(), m.Namespace()) })
		res, err := m.Campaign(t.Context(), rooms.NewRoomID(), "candidate", 30*time.Second, "")
		if err != nil || res.Status != rooms.StatusLeader {
			t.Fatalf("campaign: %+v, %v", res, err)
		}
		armed.Store(true)
		if _, err := m.Resign(t.Context(), res.RoomID, res.Token); err != nil {
			t.Fatalf("resign whose update was sent twice: %v", err)
		}
		if armed.Load() {
			t.Fatal("the resign sent no update")
		}
	})
	t.Run("try-acquire", func(t *testing.T) {
		var armed atomic.Bool
		e := newContender(t, resendingStore(t, "/update", &armed, new(atomic.Int32)))
		before, err := e.Init(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		armed.Store(true)
		res, err := e.TryAcquire(t.Context())
		if armed.Load() {
			t.Fatal("the try-acquire sent no update")
		}
		wantWonAndStored(t, e, res, err, "try-acquire whose update was sent twice")
		if res.Grant.Fence != before.Record.Fence+1 {
			t.Errorf("granted fence %d after fence %d: the call started a second term", res.Grant.Fence, before.Record.Fence)
		}
	})
	t.Run("release", func(t *testing.T) {
		var armed atomic.Bool
		e := newContender(t, resendingStore(t, "/update", &armed, new(atomic.Int32)))
		res, err := e.TryAcquire(t.Context())
		if err != nil || !res.Acquired {
			t.Fatalf("acquired=%v err=%v", res.Acquired, err)
		}
		armed.Store(true)
		if err := e.Release(t.Context(), res.Grant.Fence); err != nil {
			t.Fatalf("release whose update was sent twice: %v", err)
		}
		if armed.Load() {
			t.Fatal("the release sent no update")
		}
		if snap, err := e.Inspect(t.Context()); err != nil || snap.Record.Held() {
			t.Fatalf("after the release the store holds %+v (%v)", snap.Record, err)
		}
	})
}

// withManagers sends r and answers its /info reply with the Swarm's manager count set to n.
func withManagers(t *testing.T, base http.RoundTripper, r *http.Request, n int) (*http.Response, error) {
	resp, err := base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var info map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return nil, err
	}
	sw, ok := info["Swarm"].(map[string]any)
	if !ok {
		t.Errorf("no Swarm in the engine's info: %v", info)
		sw = map[string]any{}
	}
	sw["Managers"] = n
	body, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// TestSlowConflictIsAmbiguousOnlyWhereAWriteCanBeResent: an update refused as out of sequence
// 600 ms after it was sent is ambiguous through a manager of a Swarm with several (its leader
// may have changed and the refusal be that of a second copy), and a plain conflict through
// the only manager.
func TestSlowConflictIsAmbiguousOnlyWhereAWriteCanBeResent(t *testing.T) {
	for _, managers := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d managers", managers), func(t *testing.T) {
			store := newStoreWithTransport(t, func(base http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/info") {
						return withManagers(t, base, r, managers)
					}
					resp, err := base.RoundTrip(r)
					if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/update") {
						time.Sleep(600 * time.Millisecond) // a slow answer, not synchronisation
					}
					return resp, err
				})
			})
			e := newContender(t, store)
			snap, err := e.Init(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			// Another contender writes after this store read the record: its update, sent with
			// the version it read, is out of sequence.
			other, err := lease.New(newStore(t), e.Namespace(), lease.Identity{HolderID: "o", NodeID: "n", TaskID: "o"})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := other.TryAcquire(t.Context()); err != nil || !res.Acquired {
				t.Fatalf("the other contender: acquired=%v err=%v", res.Acquired, err)
			}
			rec := snap.Record
			rec.HolderID = "someone"
			_, err = store.Update(t.Context(), rec, snap.Version)
			switch ambiguous := errors.Is(err, lease.ErrAmbiguous); {
			case managers == 1 && (ambiguous || !errors.Is(err, lease.ErrConflict)):
				t.Fatalf("through the only manager: %v, want a plain conflict", err)
			case managers > 1 && (!ambiguous || errors.Is(err, lease.ErrConflict)):
				t.Fatalf("through one of %d managers: %v, want ambiguous and not a conflict", managers, err)
			}
		})
	}
}
