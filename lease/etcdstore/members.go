package etcdstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// How a request reaches the cluster. The etcd client spreads requests over the members round
// robin and learns that a member is gone only when its connection breaks — or, for a member
// frozen with its connections open (SIGSTOP, a paused VM, a hung disk), when gRPC's keepalive
// gives up, no sooner than 10 s after the last answer (gRPC's floor for a client's keepalive
// time). A request that went there waited its whole timeout. A request that went to a healthy
// member while the Raft leader froze waits too: the member passed it on to the frozen leader,
// and nothing answers it after the others have elected a new one.
//
// So the store keeps a connection to each member and sends every request itself: first to a
// member that has not failed lately (round robin among those), then — when that member gives
// no answer within the request's stall bound (stallBound), or answers that it cannot serve the
// request (no leader, unreachable) — to the next member as well, around the cluster and around
// again until one answers or the request's context ends. The copies already sent are left to
// run: the first answer that settles the request counts. A member that failed a request is
// tried after the others for failedFor, unless it answers one meanwhile.
//
// Reads are safe to send twice. The store's writes are conditional transactions (on a
// revision, or on a key's absence: at most one of several copies applies) or have the same
// effect twice (a registration's put, a delete). A refusal of a conditional write while
// another copy of it may have applied or may yet apply proves nothing — it may be that copy's
// own doing — unless the key holds the write's own value: callers report it as
// lease.ErrAmbiguous (refused), which the engines settle by reading back.

// failedFor is how long a member that failed a request is tried after the others.
const failedFor = 30 * time.Second

// maxStall bounds a request's wait for one member's answer before it goes to the next as well.
const maxStall = time.Second

// stallBound is how long a request waits for one member's answer before it goes to the next as
// well: an eighth of the time it has, so that it goes around a three-member cluster twice in
// that time — at least stallAfter (a healthy member answers well within it), at most maxStall.
func stallBound(ctx context.Context) time.Duration {
	d := maxStall
	if deadline, ok := ctx.Deadline(); ok {
		d = time.Until(deadline) / 8
	}
	return min(max(d, stallAfter), maxStall)
}

// member is one member of the cluster, reached through a connection of its own (made with the
// client's settings: TLS, credentials, dialer, interceptors).
type member struct {
	conn    *grpc.ClientConn
	kv      clientv3.KV
	lease   pb.LeaseClient
	maint   pb.MaintenanceClient
	watcher clientv3.Watcher

	mu       sync.Mutex
	failedAt time.Time     // when it last failed a request; zero once it answered one since
	failures chan struct{} // closed at its next failure
}

// members are the cluster's members, in the order of the endpoints.
type members struct {
	list []*member
	turn atomic.Uint32 // the round robin's next start
}

// newMembers connects to each endpoint through cli's settings. Connections are made at the
// first request, so that a member that is down delays nothing.
func newMembers(cli *clientv3.Client, endpoints []string) (*members, error) {
	ms := &members{}
	for _, ep := range endpoints {
		conn, err := cli.Dial(ep)
		if err != nil {
			ms.close()
			return nil, err
		}
		ms.list = append(ms.list, &member{conn: conn, kv: clientv3.NewKVFromKVClient(pb.NewKVClient(conn), cli),
			lease: pb.NewLeaseClient(conn), maint: pb.NewMaintenanceClient(conn),
			watcher: clientv3.NewWatchFromWatchClient(pb.NewWatchClient(conn), cli), failures: make(chan struct{})})
	}
	return ms, nil
}

func (ms *members) close() {
	for _, m := range ms.list {
		_ = m.watcher.Close()
		_ = m.conn.Close()
	}
}

// order is the order in which a request tries the members: those that have not failed in the
// last failedFor first, from the next in turn; then the others, the longest failed first.
func (ms *members) order() []*member {
	n := len(ms.list)
	start := int(ms.turn.Add(1)) % n
	out := append(slices.Clone(ms.list[start:]), ms.list[:start]...)
	now := time.Now()
	failed := make(map[*member]time.Time, n)
	for _, m := range out {
		failed[m] = m.failedSince(now)
	}
	slices.SortStableFunc(out, func(a, b *member) int { return failed[a].Compare(failed[b]) })
	return out
}

// failedSince is when m last failed a request, if within failedFor of now; zero otherwise.
func (m *member) failedSince(now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.failedAt) < failedFor {
		return m.failedAt
	}
	return time.Time{}
}

// fail records that m did not answer a request in time, or answered that it could not serve it.
func (m *member) fail() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failedAt = time.Now()
	close(m.failures)
	m.failures = make(chan struct{})
}

// answered records that m answered a request.
func (m *member) answered() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failedAt = time.Time{}
}

// nextFailure is closed when m next fails a request.
func (m *member) nextFailure() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failures
}

// cannotServe reports an answer that says its member cannot serve the request while another
// might: it has no leader, lost it, or is unreachable, overloaded or timed out.
func cannotServe(err error) bool {
	kind := kindOf(err)
	return errors.Is(kind, lease.ErrNoQuorum) || errors.Is(kind, lease.ErrUnavailable)
}

// do sends op — a Get, Put, Delete or Txn; write unless it only reads — to the members (send).
func (ms *members) do(ctx context.Context, op clientv3.Op, write bool) (clientv3.OpResponse, bool, error) {
	return send(ctx, ms, write, func(ctx context.Context, m *member) (clientv3.OpResponse, error) {
		resp, err := m.kv.Do(ctx, op)
		return resp, clientv3.ContextError(ctx, err)
	})
}

// send sends a request — call sends it to one member — to the members as the comment at the
// top of this file says, and returns the first answer that settles it: a success, or an error
// other than one that another member might not give. When ctx ends first, it returns the last
// member's error that said it could not serve the request, else ctx's error.
//
// Each copy goes to the next member, in order, that has no copy of the request outstanding and
// has not said since the last stall that it cannot serve it — a member that answers nothing
// (frozen) is asked once, while others answer — or, after a stall and failing such a member,
// to the next without a copy outstanding, or simply to the next: a member that passed a write
// on to a leader that froze never answers it, but answers a copy sent once there is a new one.
// The only member of a cluster of one is never sent a copy while one is outstanding.
//
// unsettled reports, for a write, that a copy of it besides the one answered may have applied
// or may yet apply: a copy still unanswered, or one that failed with an error that does not
// prove it never reached Raft.
func send[T any](ctx context.Context, ms *members, write bool, call func(context.Context, *member) (T, error)) (resp T, unsettled bool, err error) {
	if err := ctx.Err(); err != nil {
		return resp, false, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		m    *member
		resp T
		err  error
	}
	answers := make(chan answer)
	order, stall := ms.order(), stallBound(ctx)
	var (
		outstanding = map[*member]int{}  // copies unanswered, by member
		pending     int                  // copies unanswered
		refusing    = map[*member]bool{} // said it cannot serve since the last stall
		turn        int
		latest      *member // the member of the latest copy
		lastErr     error
	)
	next := func(stalled bool) *member {
		for _, ok := range []func(*member) bool{
			func(m *member) bool { return outstanding[m] == 0 && !refusing[m] },
			func(m *member) bool { return stalled && outstanding[m] == 0 },
			func(*member) bool { return stalled && len(order) > 1 },
		} {
			for i := range order {
				if m := order[(turn+i)%len(order)]; ok(m) {
					turn += i + 1
					return m
				}
			}
		}
		return nil
	}
	post := func(m *member) {
		latest = m
		outstanding[m]++
		pending++
		go func() {
			r, err := call(ctx, m)
			select {
			case answers <- answer{m: m, resp: r, err: err}:
			case <-ctx.Done():
			}
		}()
	}
	ended := func() (T, bool, error) {
		var zero T
		if lastErr == nil || errors.Is(ctx.Err(), context.Canceled) {
			lastErr = ctx.Err()
		}
		return zero, unsettled || (write && pending > 0), lastErr
	}
	post(next(true))
	timer := time.NewTimer(stall)
	defer timer.Stop()
	for {
		select {
		case a := <-answers:
			outstanding[a.m]--
			pending--
			if a.err != nil && ctx.Err() != nil { // cut short by ctx, not by its member
				unsettled = unsettled || (write && !notProposed(a.err))
				return ended()
			}
			if a.err != nil && cannotServe(a.err) {
				a.m.fail()
				refusing[a.m], lastErr = true, a.err
				unsettled = unsettled || (write && !notProposed(a.err))
				if m := next(false); m != nil {
					post(m)
					timer.Reset(stall)
				}
				continue
			}
			a.m.answered()
			unsettled = unsettled || (write && (pending > 0 || (a.err != nil && !notProposed(a.err))))
			return a.resp, unsettled, a.err
		case <-timer.C:
			if outstanding[latest] > 0 {
				latest.fail()
			}
			clear(refusing)
			if m := next(true); m != nil {
				post(m)
			}
			timer.Reset(stall)
		case <-ctx.Done():
			return ended()
		}
	}
}
