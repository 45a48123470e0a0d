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
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

func TestRoomsShardName(t *testing.T) {
	if got := swarmstore.RoomsShardName("elections", 7); got != "elections-rooms-07" {
		t.Fatalf("RoomsShardName = %q", got)
	}
	long := strings.Repeat("n", 60)
	seen := map[string]bool{}
	for _, ns := range []string{long, long + "x", "a.b", "a-b", "a_b"} {
		for _, i := range []int{0, 63, 255} {
			name := swarmstore.RoomsShardName(ns, i)
			if len(name) > 63 || strings.ContainsAny(name, ".") || seen[name] || strings.HasSuffix(name, "-lease") {
				t.Errorf("RoomsShardName(%q, %d) = %q (%d characters)", ns, i, name, len(name))
			}
			seen[name] = true
		}
	}
}

// TestRoomsShardIsZeroReplicaService: a shard is a label-only zero-replica service that never
// schedules a task, and holds the token only as a hash.
func TestRoomsShardIsZeroReplicaService(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	ns := leasetest.Namespace(t)
	t.Cleanup(func() { _ = store.DeleteShards(context.Background(), ns) })
	m, err := rooms.New(store, ns)
	if err != nil {
		t.Fatal(err)
	}
	room := rooms.NewRoomID()
	res, err := m.Campaign(ctx, room, "a", 30*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	name := swarmstore.RoomsShardName(ns, m.ShardOf(room))
	got, err := store.Docker().ServiceInspect(ctx, name, client.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc := got.Service
	if r := svc.Spec.Mode.Replicated; r == nil || r.Replicas == nil || *r.Replicas != 0 {
		t.Fatalf("shard mode = %+v, want replicated with 0 replicas", svc.Spec.Mode)
	}
	state := svc.Spec.Labels[swarmstore.LabelRoomsState]
	if !strings.Contains(state, room) || strings.Contains(string(got.Raw), res.Token) {
		t.Fatalf("state label %q: want the room and never the token", state)
	}
	tasks, err := store.Docker().TaskList(ctx, client.TaskListOptions{Filters: make(client.Filters).Add("service", svc.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks.Items) != 0 {
		t.Fatalf("the shard scheduled %d tasks", len(tasks.Items))
	}
	if err := store.DeleteShards(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Docker().ServiceInspect(ctx, name, client.ServiceInspectOptions{}); err == nil {
		t.Fatal("the shard still exists after DeleteShards")
	}
}

// TestRoomsForeignServiceIsNeverModified: a service that happens to bear a shard's name but was
// not made by this store is refused, never written or removed.
func TestRoomsForeignServiceIsNeverModified(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	ns := leasetest.Namespace(t)
	m, err := rooms.New(store, ns)
	if err != nil {
		t.Fatal(err)
	}
	room := rooms.NewRoomID()
	name := swarmstore.RoomsShardName(ns, m.ShardOf(room))
	replicas := uint64(0)
	created, err := store.Docker().ServiceCreate(ctx, client.ServiceCreateOptions{Spec: swarm.ServiceSpec{
		Annotations:  swarm.Annotations{Name: name, Labels: map[string]string{"owner": "someone else"}},
		TaskTemplate: swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Image: swarmstore.AnchorImage}},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = store.Docker().ServiceRemove(context.Background(), created.ID, client.ServiceRemoveOptions{})
	})
	before, err := store.Docker().ServiceInspect(ctx, created.ID, client.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ce *lease.CorruptError
	if _, err := m.Campaign(ctx, room, "a", 30*time.Second, ""); !errors.As(err, &ce) {
		t.Fatalf("campaign into a foreign service: %v, want a *lease.CorruptError", err)
	}
	if _, err := m.Status(ctx, room); !errors.As(err, &ce) {
		t.Fatalf("status from a foreign service: %v, want a *lease.CorruptError", err)
	}
	if err := store.DeleteShards(ctx, ns); err != nil {
		t.Fatal(err)
	}
	after, err := store.Docker().ServiceInspect(ctx, created.ID, client.ServiceInspectOptions{})
	if err != nil {
		t.Fatalf("the foreign service is gone: %v", err)
	}
	if after.Service.Version.Index != before.Service.Version.Index {
		t.Fatal("the foreign service was modified")
	}
}
