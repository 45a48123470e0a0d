package etcdstore_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// newStore returns a store on endpoint with a prefix of the test's own, closed when t ends.
func newStore(t testing.TB, endpoints ...string) *etcdstore.Store {
	t.Helper()
	s, err := etcdstore.New(etcdstore.Options{Endpoints: endpoints, Prefix: "/" + leasetest.Namespace(t), RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// sharedStore returns a function that hands out new clients of one prefix on one server: the
// suites' "several processes".
func sharedStore(t *testing.T, endpoint string) func(t *testing.T) *etcdstore.Store {
	prefix := "/" + leasetest.Namespace(t)
	return func(t *testing.T) *etcdstore.Store {
		s, err := etcdstore.New(etcdstore.Options{Endpoints: []string{endpoint}, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
}

func TestElectionSuite(t *testing.T) {
	ep := etcdtest.Embedded(t)
	newS := sharedStore(t, ep)
	leasetest.RunElectionSuite(t, func(t *testing.T) lease.Store { return newS(t) })
}

// TestConcurrency: 8 contenders, each with its own client (connection), against one election;
// the history is checked by porcupine and the invariants of docs/safety.md §1–2.
func TestConcurrency(t *testing.T) {
	ep := etcdtest.Embedded(t)
	newS := sharedStore(t, ep)
	leasetest.RunConcurrencySuite(t, func(t *testing.T) lease.Store { return newS(t) }, leasetest.ConcurrencyConfig{})
}

func TestVersionIsTheModRevision(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, etcdtest.Embedded(t))
	rec := lease.Record{Namespace: "jobs", HolderID: "a", Fence: 7, TTL: time.Second,
		RenewedAt: time.UnixMicro(1_700_000_000_123_456).UTC(), ExpiresAt: time.UnixMicro(1_700_000_001_123_456).UTC()}
	v1, err := s.Create(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, rec); !errors.Is(err, lease.ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	got, ver, err := s.Load(ctx, "jobs")
	if err != nil || ver != v1 || !got.Equal(rec) {
		t.Fatalf("load: %+v at %d, %v; want %+v at %d", got, ver, err, rec, v1)
	}
	resp, err := s.Client().Get(ctx, s.Options().Prefix+"/elections/jobs")
	if err != nil || lease.Version(resp.Kvs[0].ModRevision) != v1 {
		t.Fatalf("mod revision %v, version %d (%v)", resp.Kvs, v1, err)
	}
	rec.Fence = 8
	v2, err := s.Update(ctx, rec, v1)
	if err != nil || v2 <= v1 {
		t.Fatalf("update: %d, %v", v2, err)
	}
	if _, err := s.Update(ctx, rec, v1); !errors.Is(err, lease.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	if err := s.Delete(ctx, "jobs"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, rec, v2); !errors.Is(err, lease.ErrNotFound) {
		t.Fatalf("update of a deleted record: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Load(ctx, "jobs"); !errors.Is(err, lease.ErrNotFound) {
		t.Fatalf("load of a deleted record: %v, want ErrNotFound", err)
	}
}

// TestUnreachable: with no member listening, reads fail with ErrUnavailable and writes are
// ambiguous (a connection lost mid-request may have delivered them) — never a stale answer.
func TestUnreachable(t *testing.T) {
	ports, err := etcdtest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := etcdstore.New(etcdstore.Options{Endpoints: []string{"127.0.0.1:" + itoa(ports[0])}, RequestTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, _, err := s.Load(ctx, "jobs"); !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("load: %v, want ErrUnavailable", err)
	}
	if _, err := s.Update(ctx, lease.Record{Namespace: "jobs"}, 5); !errors.Is(err, lease.ErrAmbiguous) {
		t.Fatalf("update: %v, want ErrAmbiguous", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("ping: %v, want ErrUnavailable", err)
	}
}

func TestNotify(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(t, etcdtest.Embedded(t))
	ch, err := s.Notify(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, lease.Record{Namespace: "jobs", Fence: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5 s of a write")
	}
	cancel()
	for range ch { // closed once ctx ends
	}
}

// TestAuthenticationFailures: with a user and password, New authenticates as it connects; a
// refused password wraps lease.ErrPermission, a cluster that does not answer
// lease.ErrUnavailable, and neither message holds the password.
func TestAuthenticationFailures(t *testing.T) {
	const password = "pw-s3cr3t"
	ep := etcdtest.Embedded(t)
	admin := newStore(t, ep).Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, step := range []func() error{
		func() error { _, err := admin.RoleAdd(ctx, "root"); return err },
		func() error { _, err := admin.UserAdd(ctx, "root", password); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	ok, err := etcdstore.New(etcdstore.Options{Endpoints: []string{ep}, Username: "root", Password: password})
	if err != nil {
		t.Fatalf("the right password: %v", err)
	}
	_ = ok.Close()
	_, err = etcdstore.New(etcdstore.Options{Endpoints: []string{ep}, Username: "root", Password: "wrong-" + password})
	if !errors.Is(err, lease.ErrPermission) || strings.Contains(err.Error(), password) {
		t.Fatalf("a wrong password: %v", err)
	}
	ports, err := etcdtest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = etcdstore.New(etcdstore.Options{Endpoints: []string{"127.0.0.1:" + strconv.Itoa(ports[0])}, Username: "root", Password: password,
		DialTimeout: 200 * time.Millisecond})
	if !errors.Is(err, lease.ErrUnavailable) || strings.Contains(err.Error(), password) {
		t.Fatalf("no cluster: %v", err)
	}
}

// TestTLS: on a member that requires TLS and a client certificate signed by its CA, the store
// works with the CA and the client's certificate and key, and gets no answer without the
// certificate (the handshake is refused: unavailable, never a silent plain-text fallback).
func TestTLS(t *testing.T) {
	ep, files := etcdtest.EmbeddedTLS(t)
	s, err := etcdstore.New(etcdstore.Options{Endpoints: []string{ep}, CAFile: files.CA, CertFile: files.Cert, KeyFile: files.Key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(s.Describe(), "(TLS)") {
		t.Errorf("Describe() = %q", s.Describe())
	}
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping over TLS: %v", err)
	}
	noCert, err := etcdstore.New(etcdstore.Options{Endpoints: []string{ep}, CAFile: files.CA, RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer noCert.Close()
	if err := noCert.Ping(ctx); !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("ping without a client certificate: %v", err)
	}
}

// TestCheckWritable: the store reports the NOSPACE alarm, under which etcd still answers reads
// but refuses writes, as lease.ErrStoreFull — as the write itself is — and nothing once the
// alarm is disarmed.
func TestCheckWritable(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, etcdtest.Embedded(t))
	if err := s.CheckWritable(ctx); err != nil {
		t.Fatalf("a healthy cluster: %v", err)
	}
	status, err := s.Client().Status(ctx, s.Client().Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	alarm := &pb.AlarmRequest{Action: pb.AlarmRequest_ACTIVATE, MemberID: status.Header.MemberId, Alarm: pb.AlarmType_NOSPACE}
	if _, err := pb.NewMaintenanceClient(s.Client().ActiveConnection()).Alarm(ctx, alarm); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckWritable(ctx); !errors.Is(err, lease.ErrStoreFull) {
		t.Fatalf("NOSPACE raised: %v", err)
	}
	_, err = s.Create(ctx, lease.Record{Namespace: "full", HolderID: "a", Fence: 1, TTL: time.Second})
	if !errors.Is(err, lease.ErrStoreFull) {
		t.Fatalf("a write under NOSPACE: %v", err)
	}
	if _, err := s.Client().AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: status.Header.MemberId, Alarm: pb.AlarmType_NOSPACE}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckWritable(ctx); err != nil {
		t.Fatalf("disarmed: %v", err)
	}
}

// TestRequestsAreReported: every request the store sends reaches the functions OnRequest
// registered, named by its RPC, timed, and with its error classified as the store's own errors
// are (a write under NOSPACE: store_full).
func TestRequestsAreReported(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, etcdtest.Embedded(t))
	type request struct {
		op   string
		kind string
	}
	var mu sync.Mutex
	var got []request
	s.OnRequest(func(op string, took time.Duration, err error) {
		if took <= 0 {
			t.Errorf("%s took %v", op, took)
		}
		kind := ""
		if err != nil {
			kind = lease.ErrorKind(err)
		}
		mu.Lock()
		got = append(got, request{op, kind})
		mu.Unlock()
	})
	rec := lease.Record{Namespace: "reported", HolderID: "a", Fence: 1, TTL: time.Second}
	if _, err := s.Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load(ctx, "reported"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "reported"); err != nil {
		t.Fatal(err)
	}
	status, err := s.Client().Status(ctx, s.Client().Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	alarm := &pb.AlarmRequest{Action: pb.AlarmRequest_ACTIVATE, MemberID: status.Header.MemberId, Alarm: pb.AlarmType_NOSPACE}
	if _, err := pb.NewMaintenanceClient(s.Client().ActiveConnection()).Alarm(ctx, alarm); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, rec); !errors.Is(err, lease.ErrStoreFull) {
		t.Fatalf("a write under NOSPACE: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []request{{"Txn", ""}, {"Range", ""}, {"DeleteRange", ""}, {"Status", ""}, {"Alarm", ""}, {"Txn", "store_full"}}
	if !slices.Equal(got, want) {
		t.Fatalf("reported %v, want %v", got, want)
	}
}
