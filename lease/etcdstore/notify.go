package etcdstore

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// Notify implements lease.Notifier with an etcd watch of the election's key. The watch is in
// place when Notify returns: a write after it is signalled. The newest record the watch
// delivered is kept for Watched.
func (s *Store) Notify(ctx context.Context, namespace string) (<-chan struct{}, error) {
	key := s.electionKey(namespace)
	s.watchedMu.Lock()
	w := s.watched[namespace]
	if w == nil {
		w = &watchedRecord{}
		s.watched[namespace] = w
	}
	w.watchers++
	s.watchedMu.Unlock()
	context.AfterFunc(ctx, func() {
		s.watchedMu.Lock()
		defer s.watchedMu.Unlock()
		if w.watchers--; w.watchers == 0 {
			delete(s.watched, namespace)
		}
	})
	return s.watch(ctx, key, false, func(ev *clientv3.Event) {
		s.watchedMu.Lock()
		defer s.watchedMu.Unlock()
		if ev.Kv.ModRevision <= int64(w.ver) {
			return
		}
		w.ok = false
		w.ver = lease.Version(ev.Kv.ModRevision)
		if ev.Type == clientv3.EventTypePut {
			if rec, err := decodeRecord(key, namespace, ev.Kv.Value); err == nil {
				w.rec, w.ok = rec, true
			}
		}
	}), nil
}

// watchedRecord is the newest record of an election that a watch delivered.
type watchedRecord struct {
	watchers int // Notify calls whose watch is running
	rec      lease.Record
	ver      lease.Version
	ok       bool // rec is a record (not a deletion, nor a value that does not decode)
}

// Watched implements lease.WatchedRecords: the newest record of namespace that a watch of this
// store (Notify) delivered, and its version — committed, but perhaps no longer current.
func (s *Store) Watched(namespace string) (lease.Record, lease.Version, bool) {
	s.watchedMu.Lock()
	defer s.watchedMu.Unlock()
	if w := s.watched[namespace]; w != nil && w.ok {
		return w.rec, w.ver, true
	}
	return lease.Record{}, 0, false
}

// watch returns a channel signalled for every change of key (of every key under it when
// prefix) until ctx ends, when it is closed. It returns once etcd has created the watch, or
// after the request timeout (the watch then keeps trying). The watch is opened on the member a
// request would go to first (members.go). A watch that ends early — its member lost the leader
// (the watch asks for one), the connection dropped, or its member failed a request, as a
// frozen member does, whose watches stay open but deliver nothing — is opened again from the
// next revision it had not seen, after a short pause, with a signal, since changes may have been
// missed if that revision was compacted meanwhile: the notifications are hints, and their
// consumers poll as well.
// onEvent, when set, is called with every event, in order, before the signal.
func (s *Store) watch(ctx context.Context, key string, prefix bool, onEvent func(*clientv3.Event)) <-chan struct{} {
	ch := make(chan struct{}, 1)
	created := make(chan struct{})
	go func() {
		defer close(ch)
		var next int64 // the first revision not yet seen; 0 before the first watch
		pause := 50 * time.Millisecond
		for first := true; ctx.Err() == nil; first = false {
			opts := []clientv3.OpOption{clientv3.WithCreatedNotify()}
			if prefix {
				opts = append(opts, clientv3.WithPrefix())
			}
			if next > 0 {
				opts = append(opts, clientv3.WithRev(next))
			}
			m := s.members.order()[0]
			wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
			failed := m.nextFailure()
			go func() {
				select {
				case <-failed:
					cancel()
				case <-wctx.Done():
				}
			}()
			for resp := range m.watcher.Watch(wctx, key, opts...) {
				if resp.Created && first {
					close(created)
					first = false
				}
				if resp.Err() != nil {
					next = 0 // compacted or cancelled: start again from now
					break
				}
				if resp.Header.Revision > 0 && next == 0 {
					next = resp.Header.Revision + 1
				}
				if len(resp.Events) > 0 {
					if onEvent != nil {
						for _, ev := range resp.Events {
							onEvent(ev)
						}
					}
					next = resp.Events[len(resp.Events)-1].Kv.ModRevision + 1
					lease.Signal(ch)
					pause = 50 * time.Millisecond
				}
			}
			cancel()
			if ctx.Err() != nil {
				return
			}
			lease.Signal(ch)
			_ = timing.Sleep(ctx, pause) // a back-off between watches, not a synchronisation
			pause = min(2*pause, 2*time.Second)
		}
	}()
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case <-created:
	case <-ctx.Done():
	case <-t.C:
	}
	return ch
}
