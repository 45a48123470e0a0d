package swarmstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// newStore connects to the test Swarm (see leasetest.SwarmHost).
func newStore(t testing.TB) *swarmstore.Store {
	t.Helper()
	host := leasetest.SwarmHost(t)
	s, err := swarmstore.NewFromEnv(client.WithHost(host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestElectionSuite(t *testing.T) {
	store := newStore(t)
	leasetest.RunElectionSuite(t, func(*testing.T) lease.Store { return store })
}

func TestAnchorIsZeroReplicaService(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	ns := leasetest.Namespace(t)
	e, err := lease.New(store, ns, lease.Identity{HolderID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Destroy(ctx) })
	g, err := e.TryAcquire(ctx)
	if err != nil || !g.Acquired {
		t.Fatalf("try-acquire: %+v, %v", g, err)
	}
	res, err := store.Docker().ServiceInspect(ctx, swarmstore.AnchorName(ns), client.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc := res.Service
	if r := svc.Spec.Mode.Replicated; r == nil || r.Replicas == nil || *r.Replicas != 0 {
		t.Fatalf("anchor mode = %+v, want replicated with 0 replicas", svc.Spec.Mode)
	}
	if got := svc.Spec.Labels[swarmstore.LabelPrefix+"holder_id"]; got != "a" {
		t.Fatalf("holder label = %q", got)
	}
	tasks, err := store.Docker().TaskList(ctx, client.TaskListOptions{Filters: make(client.Filters).Add("service", svc.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks.Items) != 0 {
		t.Fatalf("the anchor scheduled %d tasks", len(tasks.Items))
	}
	if err := e.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Docker().ServiceInspect(ctx, swarmstore.AnchorName(ns), client.ServiceInspectOptions{}); err == nil {
		t.Fatal("the anchor still exists after destroy")
	}
}

// editLabel changes one label of the anchor by hand, as an operator might.
func editLabel(t *testing.T, store *swarmstore.Store, ns, key, value string) {
	t.Helper()
	ctx := context.Background()
	res, err := store.Docker().ServiceInspect(ctx, swarmstore.AnchorName(ns), client.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := res.Service.Spec
	spec.Labels[key] = value
	if _, err := store.Docker().ServiceUpdate(ctx, res.Service.ID, client.ServiceUpdateOptions{Version: res.Service.Version, Spec: spec}); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptLabelsAreNeverOverwritten(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	for _, tc := range []struct{ label, value string }{
		{"fence", "seven"},
		{"expires_at", "tomorrow"},
		{"ttl_ms", "-5"},
		{"namespace", "someone-else"},
		{"anchor", "2"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			ns := leasetest.Namespace(t)
			e, err := lease.New(store, ns, lease.Identity{HolderID: "a"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = e.Destroy(ctx) })
			if _, err := e.TryAcquire(ctx); err != nil {
				t.Fatal(err)
			}
			key := swarmstore.LabelPrefix + tc.label
			editLabel(t, store, ns, key, tc.value)
			before, _ := store.Docker().ServiceInspect(ctx, swarmstore.AnchorName(ns), client.ServiceInspectOptions{})

			_, err = e.TryAcquire(ctx)
			var corrupt *lease.CorruptError
			if !errors.As(err, &corrupt) || !strings.Contains(err.Error(), swarmstore.AnchorName(ns)) || !strings.Contains(err.Error(), key) {
				t.Fatalf("try-acquire on a corrupt anchor: %v; want a CorruptError naming the service and %s", err, key)
			}
			after, _ := store.Docker().ServiceInspect(ctx, swarmstore.AnchorName(ns), client.ServiceInspectOptions{})
			if after.Service.Version != before.Service.Version {
				t.Fatalf("the corrupt anchor was written: version %d → %d", before.Service.Version.Index, after.Service.Version.Index)
			}
		})
	}
}

func TestForeignServiceIsNeverTouched(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	ns := leasetest.Namespace(t)
	replicas := uint64(0)
	created, err := store.Docker().ServiceCreate(ctx, client.ServiceCreateOptions{Spec: swarm.ServiceSpec{
		Annotations:  swarm.Annotations{Name: swarmstore.AnchorName(ns)},
		TaskTemplate: swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Image: "busybox:latest"}},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Docker().ServiceRemove(ctx, created.ID, client.ServiceRemoveOptions{}) })
	e, err := lease.New(store, ns, lease.Identity{HolderID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var corrupt *lease.CorruptError
	if _, err := e.TryAcquire(ctx); !errors.As(err, &corrupt) {
		t.Fatalf("try-acquire over a foreign service: %v, want CorruptError", err)
	}
	if err := e.Destroy(ctx); !errors.As(err, &corrupt) {
		t.Fatalf("destroy of a foreign service: %v, want CorruptError", err)
	}
	if _, err := store.Docker().ServiceInspect(ctx, created.ID, client.ServiceInspectOptions{}); err != nil {
		t.Fatalf("the foreign service is gone: %v", err)
	}
}

func TestAnchorName(t *testing.T) {
	for ns, want := range map[string]string{
		"demo":                  "demo-lease",
		"stack_ctl":             "stack_ctl-lease",
		"a.b":                   "a-b-" + "",
		strings.Repeat("x", 80): "",
	} {
		got := swarmstore.AnchorName(ns)
		if want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("AnchorName(%q) = %q, want prefix %q", ns, got, want)
		}
		if len(got) > 63 || !strings.HasSuffix(got, "-lease") {
			t.Errorf("AnchorName(%q) = %q: not a valid anchor name", ns, got)
		}
	}
	if swarmstore.AnchorName("a.b") == swarmstore.AnchorName("a-b") {
		t.Error("distinct namespaces share an anchor")
	}
}

func TestErrorsAreClassified(t *testing.T) {
	ctx := context.Background()
	unreachable, err := swarmstore.NewFromEnv(client.WithHost("unix:///nonexistent/docker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := unreachable.Load(ctx, "x"); !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("load from a missing socket: %v, want ErrUnavailable", err)
	}
}

// TestNotifyFollowsTheEventStream: a healthy event stream is quiet until the anchor changes,
// then signals within milliseconds (a broken stream would signal once per reconnect instead).
func TestNotifyFollowsTheEventStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := newStore(t)
	ns := leasetest.Namespace(t)
	e, err := lease.New(store, ns, lease.Identity{HolderID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Destroy(context.Background()) })
	if _, err := e.Init(ctx); err != nil {
		t.Fatal(err)
	}
	ch, err := store.Notify(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	// Longer than the stream's reconnect pause: a failing stream would have signalled by now.
	select {
	case <-ch:
		t.Fatal("notification without a write")
	case <-time.After(1500 * time.Millisecond):
	}
	wrote := time.Now()
	if _, err := e.TryAcquire(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Logf("event %v after the write", time.Since(wrote))
	case <-time.After(500 * time.Millisecond):
		t.Fatal("no event within 500 ms of a write")
	}
}
