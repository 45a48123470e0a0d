package etcdstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regbo/lfp-swarm-lease/lease"
)

var _ lease.SuccessorRegistry = (*Store)(nil)

// maxSuccessors bounds the successors Successors reads: a handover needs one that is alive,
// and the longest registered come first.
const maxSuccessors = 16

// storedSuccessor is a successor registration as etcd keeps it, under
// PREFIX/successors/NAMESPACE/TOKEN, attached to an etcd lease that its process keeps alive.
type storedSuccessor struct {
	HolderID string `json:"holder_id"`
	NodeID   string `json:"node_id,omitempty"`
	TaskID   string `json:"task_id,omitempty"`
	TTLMs    int64  `json:"ttl_ms"`
	// Incarnation is the successor's lease.Incarnation.
	Incarnation string `json:"incarnation,omitempty"`
}

func (s *Store) successorsPrefix(namespace string) string {
	return s.opts.Prefix + "/successors/" + namespace + "/"
}

// successorLeaseTTL is how long a successor registration outlives its last keep-alive: its
// contender's lease TTL, at least 2 s (etcd's floor with its default timings). A stopped or
// killed contender is then dropped about as soon as a holder's term would expire.
func successorLeaseTTL(ttl time.Duration) int64 {
	return max(int64((ttl+time.Second-1)/time.Second), 2)
}

// RegisterSuccessor implements lease.SuccessorRegistry: an etcd lease of about the successor's
// TTL, kept alive by the client, and the registration's key attached to it. It returns when ctx
// ends (revoking the lease, so the key goes at once) or the keep-alive stops (the lease lapsed:
// the key went with it).
func (s *Store) RegisterSuccessor(ctx context.Context, namespace string, su lease.Successor) error {
	key := s.successorsPrefix(namespace) + su.Token
	value, err := json.Marshal(storedSuccessor{HolderID: su.Identity.HolderID, NodeID: su.Identity.NodeID,
		TaskID: su.Identity.TaskID, TTLMs: su.TTL.Milliseconds(), Incarnation: su.Incarnation})
	if err != nil {
		return err
	}
	// A grant sent twice grants two etcd leases; the one not used holds no key and lapses.
	rctx, cancel := s.request(ctx)
	grant, unsettled, err := send(rctx, s.members, true, func(ctx context.Context, m *member) (*pb.LeaseGrantResponse, error) {
		return m.lease.LeaseGrant(ctx, &pb.LeaseGrantRequest{TTL: successorLeaseTTL(su.TTL)})
	})
	cancel()
	if err != nil {
		return classify("register successor", key, err, unsettled)
	}
	id := clientv3.LeaseID(grant.ID)
	revoke := func() {
		rctx, cancel := s.request(context.WithoutCancel(ctx))
		defer cancel()
		_, _, _ = send(rctx, s.members, true, func(ctx context.Context, m *member) (*pb.LeaseRevokeResponse, error) {
			return m.lease.LeaseRevoke(ctx, &pb.LeaseRevokeRequest{ID: grant.ID})
		})
	}
	defer revoke()
	rctx, cancel = s.request(ctx)
	_, unsettled, err = s.members.do(rctx, clientv3.OpPut(key, string(value), clientv3.WithLease(id)), true)
	cancel()
	if err != nil {
		return classify("register successor", key, err, unsettled)
	}
	alive, err := s.cli.KeepAlive(ctx, id)
	if err != nil {
		return classify("register successor", key, err, false)
	}
	for range alive { // drained until the keep-alive ends
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("etcd store: successor registration %q lapsed: %w", key, lease.ErrUnavailable)
}

// Successors implements lease.SuccessorRegistry: one linearizable read of the registrations,
// the longest registered first.
func (s *Store) Successors(ctx context.Context, namespace string) ([]lease.Successor, error) {
	prefix := s.successorsPrefix(namespace)
	ctx, cancel := s.request(ctx)
	defer cancel()
	got, _, err := s.members.do(ctx, clientv3.OpGet(prefix, clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(maxSuccessors)), false)
	if err != nil {
		return nil, classify("successors", prefix, err, false)
	}
	resp := got.Get()
	out := make([]lease.Successor, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var v storedSuccessor
		// A registration that does not read is skipped: it names nobody a term can be written for.
		if json.Unmarshal(kv.Value, &v) != nil || v.HolderID == "" || v.TTLMs <= 0 {
			continue
		}
		out = append(out, lease.Successor{Identity: lease.Identity{HolderID: v.HolderID, NodeID: v.NodeID, TaskID: v.TaskID},
			TTL: time.Duration(v.TTLMs) * time.Millisecond, Token: string(kv.Key[len(prefix):]), Incarnation: v.Incarnation})
	}
	return out, nil
}

// HandOver implements lease.SuccessorRegistry: one transaction, conditional on the record's mod
// revision and on the successor's registration still existing.
func (s *Store) HandOver(ctx context.Context, rec lease.Record, expected lease.Version, to lease.Successor) (lease.Version, error) {
	key := s.electionKey(rec.Namespace)
	reg := s.successorsPrefix(rec.Namespace) + to.Token
	if to.Token == "" || rec.Handover.To != to.Token {
		return 0, errors.New("etcd store: hand over: the record does not name the successor's registration")
	}
	ver, cur, err := s.putRecord(ctx, "hand over", key, encodeRecord(rec),
		clientv3.Compare(clientv3.ModRevision(key), "=", int64(expected)), clientv3.Compare(clientv3.CreateRevision(reg), ">", 0))
	switch {
	case err != nil || cur == nil:
		return ver, err
	case len(cur.Kvs) == 0:
		return 0, fmt.Errorf("etcd store: hand over %q: %w", key, lease.ErrNotFound)
	case cur.Kvs[0].ModRevision == int64(expected):
		return 0, fmt.Errorf("etcd store: hand over %q to %q: %w", key, reg, lease.ErrSuccessorGone)
	}
	return 0, fmt.Errorf("etcd store: hand over %q: version %d changed: %w", key, expected, lease.ErrConflict)
}
