package etcdstore

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Store keeps election records (lease.Store) and rooms (rooms.Store, rooms.RoomStore) in etcd.
// It is safe for concurrent use; Close releases its connections.
type Store struct {
	cli *clientv3.Client
	// members carry the store's requests (members.go); cli's own connection, balanced over
	// the members, carries only what is not a request of the store's: authentication, and the
	// keep-alives of successor registrations.
	members   *members
	opts      Options
	timeout   time.Duration
	observers *requestObservers
	// reads and writes merge the rooms' concurrent transactions (coalesce.go).
	reads, writes *coalescer
	// watched is the newest record each election's watch delivered (Notify, Watched).
	watchedMu sync.Mutex
	watched   map[string]*watchedRecord
}

var (
	_ lease.Store          = (*Store)(nil)
	_ lease.Notifier       = (*Store)(nil)
	_ lease.ClockFencer    = (*Store)(nil)
	_ lease.WatchedRecords = (*Store)(nil)
	_ lease.Rerouter       = (*Store)(nil)
)

// New connects to the cluster of o. It does not wait for the cluster: a member that cannot be
// reached shows in the first request's error (lease.ErrUnavailable), so that a server starts,
// and reports itself not ready, while etcd is down. With a user and password it does wait, up
// to the dial timeout: the client authenticates as it connects, and a failure is the error of
// New, wrapping lease.ErrPermission (refused) or lease.ErrUnavailable (no answer).
func New(o Options) (*Store, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	observers := &requestObservers{}
	cfg := clientv3.Config{
		Endpoints:   o.Endpoints,
		DialTimeout: o.DialTimeout,
		// Keepalives find a member that went away without closing the connection (a
		// partition, a host that died) — no sooner than gRPC's floor of 10 s allows: a request
		// does not wait for them to go to another member (members.go).
		DialKeepAliveTime:    2 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		Username:             o.Username,
		Password:             o.Password,
		Logger:               zap.NewNop(),
		// A member whose cluster is older than this client's expectations is refused.
		RejectOldCluster: false,
		DialOptions:      []grpc.DialOption{grpc.WithChainUnaryInterceptor(observers.unary)},
	}
	if o.Dial != nil {
		cfg.DialOptions = append(cfg.DialOptions, grpc.WithContextDialer(o.Dial))
	}
	if o.tls() {
		info := transport.TLSInfo{TrustedCAFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile}
		tc, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd store: TLS files: %w", err)
		}
		tc.MinVersion = tls.VersionTLS12
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		if kind := kindOf(err); kind != nil {
			return nil, fmt.Errorf("etcd store: connect to %s: %w: %w", strings.Join(o.Endpoints, ","), kind, err)
		}
		return nil, fmt.Errorf("etcd store: connect to %s: %w", strings.Join(o.Endpoints, ","), err)
	}
	ms, err := newMembers(cli, o.Endpoints)
	if err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("etcd store: connect to %s: %w", strings.Join(o.Endpoints, ","), err)
	}
	return &Store{cli: cli, members: ms, opts: o, timeout: o.RequestTimeout, observers: observers, watched: map[string]*watchedRecord{},
		reads: &coalescer{members: ms, timeout: o.RequestTimeout, read: true}, writes: &coalescer{members: ms, timeout: o.RequestTimeout}}, nil
}

// Open is ParseURL then New.
func Open(rawURL string) (*Store, error) {
	o, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return New(o)
}

// Close closes the store's connections; watches end.
func (s *Store) Close() error {
	s.members.close()
	return s.cli.Close()
}

// Client is the store's etcd client, for health checks and tests.
func (s *Store) Client() *clientv3.Client { return s.cli }

// Options returns the store's options, defaults applied.
func (s *Store) Options() Options { return s.opts }

// Describe implements lease.Store.
func (s *Store) Describe() string { return s.opts.String() }

// ClockFences implements lease.ClockFencer: etcd can be restored from an older snapshot, which
// rolls every record back (docs/safety.md §7c).
func (s *Store) ClockFences() bool { return true }

// Reroutes implements lease.Rerouter: a request a member does not answer goes to the next
// (members.go).
func (s *Store) Reroutes() bool { return true }

// Ping asks the cluster for a linearizable read of one key: nil when a quorum answers. For
// readiness checks.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.request(ctx)
	defer cancel()
	_, _, err := s.members.do(ctx, clientv3.OpGet(s.opts.Prefix+"/ping", clientv3.WithCountOnly()), false)
	return classify("ping", s.opts.Prefix, err, false)
}

// request derives one request's context: bounded by the request timeout, and failing at once
// on a member without a leader (which would otherwise hold the request until it times out) —
// the request then goes to another member (members.go).
func (s *Store) request(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	return clientv3.WithRequireLeader(ctx), cancel
}

func (s *Store) electionKey(namespace string) string {
	return s.opts.Prefix + "/elections/" + namespace
}

// Load implements lease.Store with a linearizable read.
func (s *Store) Load(ctx context.Context, namespace string) (lease.Record, lease.Version, error) {
	key := s.electionKey(namespace)
	ctx, cancel := s.request(ctx)
	defer cancel()
	got, _, err := s.members.do(ctx, clientv3.OpGet(key), false)
	if err != nil {
		return lease.Record{}, 0, classify("load", key, err, false)
	}
	resp := got.Get()
	if len(resp.Kvs) == 0 {
		return lease.Record{}, 0, fmt.Errorf("etcd store: %q: %w", key, lease.ErrNotFound)
	}
	kv := resp.Kvs[0]
	rec, err := decodeRecord(key, namespace, kv.Value)
	if err != nil {
		return lease.Record{}, 0, err
	}
	return rec, lease.Version(kv.ModRevision), nil
}

// Create implements lease.Store: a transaction that puts the key only if it does not exist.
func (s *Store) Create(ctx context.Context, rec lease.Record) (lease.Version, error) {
	key := s.electionKey(rec.Namespace)
	ver, cur, err := s.putRecord(ctx, "create", key, encodeRecord(rec), clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
	if err != nil || cur == nil {
		return ver, err
	}
	return 0, fmt.Errorf("etcd store: create %q: %w", key, lease.ErrExists)
}

// Update implements lease.Store: a transaction conditional on the key's mod revision. The
// version it returns is the transaction's own revision — the key's new mod revision.
func (s *Store) Update(ctx context.Context, rec lease.Record, expected lease.Version) (lease.Version, error) {
	key := s.electionKey(rec.Namespace)
	ver, cur, err := s.putRecord(ctx, "update", key, encodeRecord(rec), clientv3.Compare(clientv3.ModRevision(key), "=", int64(expected)))
	switch {
	case err != nil || cur == nil:
		return ver, err
	case len(cur.Kvs) == 0:
		return 0, fmt.Errorf("etcd store: update %q: %w", key, lease.ErrNotFound)
	}
	return 0, fmt.Errorf("etcd store: update %q: version %d changed: %w", key, expected, lease.ErrConflict)
}

// putRecord puts value at key in a transaction conditional on cmps, and returns the version it
// wrote — or, when etcd refused it, what key holds (cur; an empty range when it does not
// exist), for the caller to say why. A refusal while another copy of the write may have
// applied is ErrAmbiguous, unless key holds the write's own value: that copy applied, at the
// version returned.
func (s *Store) putRecord(ctx context.Context, op, key string, value []byte, cmps ...clientv3.Cmp) (lease.Version, *clientv3.GetResponse, error) {
	ctx, cancel := s.request(ctx)
	defer cancel()
	resp, unsettled, err := s.members.do(ctx, clientv3.OpTxn(cmps,
		[]clientv3.Op{clientv3.OpPut(key, string(value))}, []clientv3.Op{clientv3.OpGet(key)}), true)
	if err != nil {
		return 0, nil, classify(op, key, err, unsettled)
	}
	txn := resp.Txn()
	if txn.Succeeded {
		return lease.Version(txn.Header.Revision), nil, nil
	}
	cur := (*clientv3.GetResponse)(txn.Responses[0].GetResponseRange())
	switch {
	case !unsettled:
		return 0, cur, nil
	case len(cur.Kvs) == 1 && bytes.Equal(cur.Kvs[0].Value, value):
		return lease.Version(cur.Kvs[0].ModRevision), nil, nil
	}
	return 0, nil, refused(op, key, true, nil)
}

// Delete implements lease.Store.
func (s *Store) Delete(ctx context.Context, namespace string) error {
	key := s.electionKey(namespace)
	ctx, cancel := s.request(ctx)
	defer cancel()
	_, unsettled, err := s.members.do(ctx, clientv3.OpDelete(key), true)
	return classify("delete", key, err, unsettled)
}
