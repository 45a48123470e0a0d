package swarmstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// The Swarm store also keeps the shards of the elections API's rooms (package rooms): each
// shard is a zero-replica service <namespace>-rooms-NN whose label lfp-swarm-lease.rooms.state
// holds the shard's JSON document, written by compare-and-swap on the service's version index
// exactly like an election's anchor. A label-only update schedules nothing. The whole service
// object, current and previous spec, travels in one Raft proposal (capped at 1.5 MiB): the
// rooms package bounds each shard's document (docs/rooms.md has the measured limits).
//
// There is no cross-replica activation lock: it would cost a second Raft write per
// activation (docs/rooms.md, "Capacity").

// Label keys of a rooms shard service.
const (
	// LabelRooms marks a rooms shard; its value is the label layout version.
	LabelRooms          = LabelPrefix + "rooms"
	labelRoomsNamespace = LabelPrefix + "rooms.namespace"
	labelRoomsShard     = LabelPrefix + "rooms.shard"
	// LabelRoomsState holds the shard's JSON document.
	LabelRoomsState = LabelPrefix + "rooms.state"

	roomsSchema = "1"
	roomsSuffix = "-rooms-"
)

var (
	_ rooms.Store         = (*Store)(nil)
	_ rooms.ShardNotifier = (*Store)(nil)
)

// RoomsShardName returns the name of the service that stores shard index of namespace's rooms:
// the namespace with "-rooms-NN" appended. A namespace that is not a valid Swarm service name as
// it is ('.' in it, or too long) is shortened and made unique with a hash of the full namespace,
// as AnchorName does; the namespace label always holds the full name. Lease anchors end in
// "-lease", so the two never share a name.
func RoomsShardName(namespace string, index int) string {
	return serviceName(namespace, fmt.Sprintf("%s%02d", roomsSuffix, index))
}

// LoadShard implements rooms.Store.
func (s *Store) LoadShard(ctx context.Context, key rooms.ShardKey) ([]byte, lease.Version, error) {
	name := RoomsShardName(key.Namespace, key.Index)
	res, err := s.docker.ServiceInspect(ctx, name, client.ServiceInspectOptions{})
	if err != nil {
		return nil, 0, wrap("read", name, classify(err, false))
	}
	svc := res.Service
	if svc.Spec.Name != name {
		// Docker also resolves ID prefixes; only an exact name is ours.
		return nil, 0, wrap("read", name, lease.ErrNotFound)
	}
	data, err := shardState(name, key, svc.Spec.Labels)
	if err != nil {
		return nil, 0, err
	}
	ver := lease.Version(svc.Version.Index)
	s.remember(name, cachedSpec{id: svc.ID, version: ver, spec: svc.Spec})
	return data, ver, nil
}

// shardState checks that labels are those of the rooms shard key and returns its document.
func shardState(service string, key rooms.ShardKey, labels map[string]string) ([]byte, error) {
	where := fmt.Sprintf("service %q", service)
	if v, ok := labels[LabelRooms]; !ok {
		return nil, &lease.CorruptError{Where: where, Reason: fmt.Sprintf(
			"the service exists but is not a rooms shard (no label %s); choose another namespace — it is never modified", LabelRooms)}
	} else if v != roomsSchema {
		return nil, &lease.CorruptError{Where: where, Field: "label " + LabelRooms, Value: v, Reason: "unknown shard layout; upgrade lfp-swarm-lease"}
	}
	if v := labels[labelRoomsNamespace]; v != key.Namespace {
		return nil, &lease.CorruptError{Where: where, Field: "label " + labelRoomsNamespace, Value: v,
			Reason: fmt.Sprintf("the shard belongs to another namespace than %q", key.Namespace)}
	}
	if v := labels[labelRoomsShard]; v != strconv.Itoa(key.Index) {
		return nil, &lease.CorruptError{Where: where, Field: "label " + labelRoomsShard, Value: v,
			Reason: fmt.Sprintf("the service is not shard %d", key.Index)}
	}
	return []byte(labels[LabelRoomsState]), nil
}

func shardLabels(key rooms.ShardKey, data []byte, labels map[string]string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelRooms] = roomsSchema
	labels[labelRoomsNamespace] = key.Namespace
	labels[labelRoomsShard] = strconv.Itoa(key.Index)
	labels[LabelRoomsState] = string(data)
	return labels
}

// CreateShard implements rooms.Store: it creates the shard's zero-replica service.
func (s *Store) CreateShard(ctx context.Context, key rooms.ShardKey, data []byte) (lease.Version, error) {
	name := RoomsShardName(key.Namespace, key.Index)
	id, err := s.createService(ctx, name, "rooms-shard", shardLabels(key, data, nil))
	if err != nil {
		return 0, err
	}
	// The create answer has no version: read it back.
	return s.readBack(ctx, name, id, shardIs(name, key, data))
}

// UpdateShard implements rooms.Store: a label-only service update conditional on the version
// index.
func (s *Store) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	name := RoomsShardName(key.Namespace, key.Index)
	return s.updateLabels(ctx, name, expected,
		func() error { _, _, err := s.LoadShard(ctx, key); return err },
		func(labels map[string]string) map[string]string { return shardLabels(key, data, labels) },
		shardIs(name, key, data))
}

// shardIs reports whether read-back labels hold exactly data.
func shardIs(name string, key rooms.ShardKey, data []byte) func(map[string]string) bool {
	return func(labels map[string]string) bool {
		back, err := shardState(name, key, labels)
		return err == nil && string(back) == string(data)
	}
}

// ListShards implements rooms.Store with one service list call filtered on the namespace label.
func (s *Store) ListShards(ctx context.Context, namespace string) ([]rooms.Shard, error) {
	svcs, err := s.listShards(ctx, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]rooms.Shard, 0, len(svcs))
	for _, svc := range svcs {
		out = append(out, rooms.Shard{Index: svc.index, Data: []byte(svc.Spec.Labels[LabelRoomsState]), Version: lease.Version(svc.Version.Index)})
	}
	return out, nil
}

type shardService struct {
	swarm.Service
	index int
}

func (s *Store) listShards(ctx context.Context, namespace string) ([]shardService, error) {
	res, err := s.docker.ServiceList(ctx, client.ServiceListOptions{
		Filters: make(client.Filters).Add("label", labelRoomsNamespace+"="+namespace),
	})
	if err != nil {
		return nil, fmt.Errorf("swarm store: list rooms shards of %q: %w", namespace, classify(err, false))
	}
	var out []shardService
	for _, svc := range res.Items {
		index, err := strconv.Atoi(svc.Spec.Labels[labelRoomsShard])
		if err != nil || index < 0 || svc.Spec.Name != RoomsShardName(namespace, index) || svc.Spec.Labels[LabelRooms] == "" {
			continue // labelled by hand, not by this store: never ours
		}
		out = append(out, shardService{Service: svc, index: index})
	}
	return out, nil
}

// DeleteShards implements rooms.Store: it removes the namespace's shard services.
func (s *Store) DeleteShards(ctx context.Context, namespace string) error {
	svcs, err := s.listShards(ctx, namespace)
	if err != nil {
		return err
	}
	for _, svc := range svcs {
		s.forget(svc.Spec.Name)
		if _, err := s.docker.ServiceRemove(ctx, svc.ID, client.ServiceRemoveOptions{}); err != nil {
			if err = classify(err, true); !errors.Is(err, lease.ErrNotFound) {
				return wrap("remove", svc.Spec.Name, err)
			}
		}
	}
	return nil
}

// NotifyShard implements rooms.ShardNotifier with Docker's event stream on the shard's service
// (see Notify).
func (s *Store) NotifyShard(ctx context.Context, key rooms.ShardKey) (<-chan struct{}, error) {
	return s.notifyService(ctx, RoomsShardName(key.Namespace, key.Index)), nil
}
