package etcdstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// Rooms layout (docs/rooms.md §2), under <prefix>/rooms/<namespace>/:
//
//	s/NNN          the head of shard NNN (3 digits): schema, namespace, shard, shard count, the
//	               term floor, and the bytes its rooms account for (rooms.RoomBytes)
//	s/NNN/<room>   one room: its entry, as the shard document holds it
//	x/NNN/<expires_at ms, 16 digits>/<room>
//	               the expiry index: the room's accounted bytes; counted for the active-room
//	               limit, read to collect expired rooms
//
// A shard's version is the highest mod revision under s/NNN. Every write that removes a room
// also writes the head, so that the version moves with every change (a deletion leaves no mod
// revision behind). The rooms.Store methods present a shard as the document the engine's other
// stores keep; the rooms.RoomStore methods are what a Manager uses.

var (
	_ rooms.Store         = (*Store)(nil)
	_ rooms.RoomStore     = (*Store)(nil)
	_ rooms.ShardNotifier = (*Store)(nil)
)

// maxTxnOps stays below etcd's default limit of 128 operations per transaction.
const maxTxnOps = 100

func (s *Store) roomsPrefix(ns string) string { return s.opts.Prefix + "/rooms/" + ns + "/" }

func (s *Store) headKey(k rooms.ShardKey) string {
	return fmt.Sprintf("%ss/%03d", s.roomsPrefix(k.Namespace), k.Index)
}

func (s *Store) roomKey(k rooms.ShardKey, id string) string { return s.headKey(k) + "/" + id }

func (s *Store) indexPrefix(k rooms.ShardKey) string {
	return fmt.Sprintf("%sx/%03d/", s.roomsPrefix(k.Namespace), k.Index)
}

// indexKey is the expiry index entry of room id; expiries before 1970 sort as 0.
func (s *Store) indexKey(k rooms.ShardKey, expiresMs int64, id string) string {
	return s.indexPrefix(k) + expiryKey(expiresMs) + "/" + id
}

func expiryKey(ms int64) string { return fmt.Sprintf("%016d", max(ms, 0)) }

// entryExpiry reads expires_at from a room entry.
func entryExpiry(data []byte) (int64, error) {
	var e struct {
		E int64 `json:"e"`
	}
	err := json.Unmarshal(data, &e)
	return e.E, err
}

// shardView is a shard as a document: the head's fields and the rooms, as the engine encodes it.
type shardView struct {
	Schema    int                        `json:"schema"`
	Namespace string                     `json:"ns"`
	Index     int                        `json:"shard"`
	Shards    int                        `json:"shards"`
	Floor     uint64                     `json:"floor"`
	Rooms     map[string]json.RawMessage `json:"rooms"`
}

// shardKVs is what is stored of one shard.
type shardKVs struct {
	head    []byte
	rooms   map[string]json.RawMessage
	version lease.Version // the highest mod revision
}

func newShardKVs() *shardKVs { return &shardKVs{rooms: map[string]json.RawMessage{}} }

// add files kv, the shard's head or, isRoom, its room id.
func (sh *shardKVs) add(kv *mvccpb.KeyValue, id string, isRoom bool) {
	sh.version = max(sh.version, lease.Version(kv.ModRevision))
	if isRoom {
		sh.rooms[id] = kv.Value
	} else {
		sh.head = kv.Value
	}
}

// readShard reads the head and rooms of shard k, in one linearizable range.
func (s *Store) readShard(ctx context.Context, k rooms.ShardKey) (*shardKVs, error) {
	ctx, cancel := s.request(ctx)
	defer cancel()
	head := s.headKey(k)
	got, _, err := s.members.do(ctx, clientv3.OpGet(head, clientv3.WithPrefix()), false)
	if err != nil {
		return nil, classify("load shard", head, err, false)
	}
	resp := got.Get()
	out := newShardKVs()
	for _, kv := range resp.Kvs {
		id, isRoom := strings.CutPrefix(string(kv.Key), head+"/")
		out.add(kv, id, isRoom)
	}
	return out, nil
}

// document encodes a shard as the engine's shard document.
func (sh *shardKVs) document(where string) ([]byte, error) {
	var v shardView // the head's fields; its bytes are not the document's
	if err := json.Unmarshal(sh.head, &v); err != nil {
		return nil, &lease.CorruptError{Where: where, Reason: fmt.Sprintf("not a rooms shard head (%v)", err)}
	}
	v.Rooms = sh.rooms
	return rooms.CanonicalJSON(v), nil
}

// LoadShard implements rooms.Store: the shard's head and rooms as one document, at the highest
// mod revision among them.
func (s *Store) LoadShard(ctx context.Context, k rooms.ShardKey) ([]byte, lease.Version, error) {
	sh, err := s.readShard(ctx, k)
	if err != nil {
		return nil, 0, err
	}
	if sh.head == nil {
		return nil, 0, fmt.Errorf("etcd store: shard %q: %w", s.headKey(k), lease.ErrNotFound)
	}
	doc, err := sh.document(fmt.Sprintf("etcd key %q", s.headKey(k)))
	return doc, sh.version, err
}

// CreateShard implements rooms.Store: the head and the rooms of data, if nothing of the shard
// is stored.
func (s *Store) CreateShard(ctx context.Context, k rooms.ShardKey, data []byte) (lease.Version, error) {
	ops, err := s.documentOps(k, data, newShardKVs())
	if err != nil {
		return 0, err
	}
	head := s.headKey(k)
	ctx, cancel := s.request(ctx)
	defer cancel()
	resp, unsettled, err := s.members.do(ctx, clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(head).WithPrefix(), "=", 0)}, ops, nil), true)
	if err != nil {
		return 0, classify("create shard", head, err, unsettled)
	}
	txn := resp.Txn()
	if !txn.Succeeded {
		return 0, refused("create shard", head, unsettled, fmt.Errorf("etcd store: create shard %q: %w", head, lease.ErrExists))
	}
	return lease.Version(txn.Header.Revision), nil
}

// UpdateShard implements rooms.Store: the rooms and head that differ from what is stored, if
// nothing under the shard changed since expected (no mod revision above it, and the head still
// there — a room is never removed without a write of the head).
func (s *Store) UpdateShard(ctx context.Context, k rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	head := s.headKey(k)
	cur, err := s.readShard(ctx, k)
	if err != nil {
		return 0, err
	}
	if cur.head == nil {
		return 0, fmt.Errorf("etcd store: update shard %q: %w", head, lease.ErrNotFound)
	}
	if cur.version != expected {
		return 0, fmt.Errorf("etcd store: update shard %q: version %d, expected %d: %w", head, cur.version, expected, lease.ErrConflict)
	}
	ops, err := s.documentOps(k, data, cur)
	if err != nil {
		return 0, err
	}
	ctx, cancel := s.request(ctx)
	defer cancel()
	resp, unsettled, err := s.members.do(ctx, clientv3.OpTxn([]clientv3.Cmp{
		clientv3.Compare(clientv3.Version(head), ">", 0),
		clientv3.Compare(clientv3.ModRevision(head).WithPrefix(), "<", int64(expected)+1),
	}, ops, []clientv3.Op{clientv3.OpGet(head, clientv3.WithKeysOnly())}), true)
	if err != nil {
		return 0, classify("update shard", head, err, unsettled)
	}
	txn := resp.Txn()
	switch {
	case txn.Succeeded:
		return lease.Version(txn.Header.Revision), nil
	case len(txn.Responses[0].GetResponseRange().Kvs) == 0:
		return 0, refused("update shard", head, unsettled, fmt.Errorf("etcd store: update shard %q: %w", head, lease.ErrNotFound))
	}
	return 0, refused("update shard", head, unsettled, fmt.Errorf("etcd store: update shard %q: version %d changed: %w", head, expected, lease.ErrConflict))
}

// documentOps are the operations that turn the stored shard cur into document data: the head,
// the rooms that differ, the rooms that went, and their index entries.
func (s *Store) documentOps(k rooms.ShardKey, data []byte, cur *shardKVs) ([]clientv3.Op, error) {
	var v shardView
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("etcd store: shard %q: not a shard document: %w", s.headKey(k), err)
	}
	var ops []clientv3.Op
	total := 0
	for _, id := range slices.Sorted(maps.Keys(v.Rooms)) {
		entry := rooms.CanonicalJSON(v.Rooms[id]) // compacted as the document's own encoding has it
		size := rooms.RoomBytes(id, entry)
		total += size
		old, stored := cur.rooms[id]
		if stored && bytes.Equal(old, entry) {
			continue
		}
		exp, err := entryExpiry(entry)
		if err != nil {
			return nil, fmt.Errorf("etcd store: shard %q: room %q: %w", s.headKey(k), id, err)
		}
		ops = append(ops, clientv3.OpPut(s.roomKey(k, id), string(entry)))
		newIndex := s.indexKey(k, exp, id)
		if stored {
			if oldExp, err := entryExpiry(old); err == nil && s.indexKey(k, oldExp, id) != newIndex {
				ops = append(ops, clientv3.OpDelete(s.indexKey(k, oldExp, id)))
			}
		}
		ops = append(ops, clientv3.OpPut(newIndex, strconv.Itoa(size)))
	}
	for id, old := range cur.rooms {
		if _, ok := v.Rooms[id]; ok {
			continue
		}
		ops = append(ops, clientv3.OpDelete(s.roomKey(k, id)))
		if exp, err := entryExpiry(old); err == nil {
			ops = append(ops, clientv3.OpDelete(s.indexKey(k, exp, id)))
		}
	}
	h := rooms.ShardHead{Schema: v.Schema, Namespace: v.Namespace, Index: v.Index, Shards: v.Shards, Floor: v.Floor, Bytes: total}
	return append(ops, clientv3.OpPut(s.headKey(k), string(rooms.CanonicalJSON(h)))), nil
}

// ListShards implements rooms.Store. It reads every room of the namespace: for the engine's
// document path and for tests; a Manager on this store never calls it.
func (s *Store) ListShards(ctx context.Context, namespace string) ([]rooms.Shard, error) {
	p := s.roomsPrefix(namespace) + "s/"
	rctx, cancel := s.request(ctx)
	defer cancel()
	got, _, err := s.members.do(rctx, clientv3.OpGet(p, clientv3.WithPrefix()), false)
	if err != nil {
		return nil, classify("list shards", p, err, false)
	}
	resp := got.Get()
	byIndex := map[int]*shardKVs{}
	for _, kv := range resp.Kvs {
		num, id, isRoom := strings.Cut(strings.TrimPrefix(string(kv.Key), p), "/")
		i, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		if byIndex[i] == nil {
			byIndex[i] = newShardKVs()
		}
		byIndex[i].add(kv, id, isRoom)
	}
	var out []rooms.Shard
	for i, sh := range byIndex {
		if sh.head == nil {
			continue
		}
		doc, err := sh.document(fmt.Sprintf("etcd key %q", p+fmt.Sprintf("%03d", i)))
		if err != nil {
			return nil, err
		}
		out = append(out, rooms.Shard{Index: i, Data: doc, Version: sh.version})
	}
	return out, nil
}

// DeleteShards implements rooms.Store: every key of the namespace's rooms, floors included.
func (s *Store) DeleteShards(ctx context.Context, namespace string) error {
	p := s.roomsPrefix(namespace)
	ctx, cancel := s.request(ctx)
	defer cancel()
	_, unsettled, err := s.members.do(ctx, clientv3.OpDelete(p, clientv3.WithPrefix()), true)
	return classify("delete shards", p, err, unsettled)
}

// NotifyShard implements rooms.ShardNotifier with a watch of the shard's keys.
func (s *Store) NotifyShard(ctx context.Context, k rooms.ShardKey) (<-chan struct{}, error) {
	return s.watch(ctx, s.headKey(k), true, nil), nil
}

// NotifyRoom implements rooms.RoomStore with a watch of the room's key alone.
func (s *Store) NotifyRoom(ctx context.Context, k rooms.ShardKey, roomID string) (<-chan struct{}, error) {
	return s.watch(ctx, s.roomKey(k, roomID), false, nil), nil
}

// LoadRooms implements rooms.RoomStore: one read-only transaction (a linearizable snapshot) of
// the head, the rooms and the expired end of the shard's index; more rooms than one transaction
// takes are read in further ones at the same revision.
func (s *Store) LoadRooms(ctx context.Context, k rooms.ShardKey, ids []string, expiredBefore int64, limit int) (rooms.RoomsRead, error) {
	head := s.headKey(k)
	var out rooms.RoomsRead
	ops := []clientv3.Op{clientv3.OpGet(head)}
	if expiredBefore > 0 && limit > 0 {
		ops = append(ops, clientv3.OpGet(s.indexPrefix(k), clientv3.WithRange(s.indexPrefix(k)+expiryKey(expiredBefore)), clientv3.WithLimit(int64(limit))))
	}
	fixed := len(ops)
	var rev int64
	for first := true; first || len(ids) > 0; first = false {
		n := min(len(ids), maxTxnOps-len(ops))
		for _, id := range ids[:n] {
			opts := []clientv3.OpOption{}
			if rev > 0 {
				opts = append(opts, clientv3.WithRev(rev))
			}
			ops = append(ops, clientv3.OpGet(s.roomKey(k, id), opts...))
		}
		ids = ids[n:]
		rctx, cancel := s.request(ctx)
		resp, err := s.reads.do(rctx, nil, ops, nil)
		cancel()
		if err != nil {
			return rooms.RoomsRead{}, classify("load rooms", head, err, false)
		}
		rev = cmp.Or(rev, resp.Revision)
		for i, r := range resp.Responses {
			kvs := r.GetResponseRange().Kvs
			switch {
			case first && i == 0:
				if len(kvs) > 0 {
					out.Head, out.HeadVersion = kvs[0].Value, lease.Version(kvs[0].ModRevision)
				}
			case first && i < fixed:
				for _, kv := range kvs {
					exp, id, err := s.parseIndex(k, string(kv.Key))
					if err != nil {
						return rooms.RoomsRead{}, err
					}
					size, _ := strconv.Atoi(string(kv.Value))
					out.Expired = append(out.Expired, rooms.StoredRoom{ID: id, ExpiresMs: exp, Size: size})
				}
			default:
				for _, kv := range kvs {
					id := strings.TrimPrefix(string(kv.Key), head+"/")
					exp, err := entryExpiry(kv.Value)
					if err != nil {
						return rooms.RoomsRead{}, &lease.CorruptError{Where: fmt.Sprintf("etcd key %q", kv.Key), Reason: "not a room entry: " + err.Error()}
					}
					out.Rooms = append(out.Rooms, rooms.StoredRoom{ID: id, Data: kv.Value, ExpiresMs: exp,
						Size: rooms.RoomBytes(id, kv.Value), Version: lease.Version(kv.ModRevision)})
				}
			}
		}
		ops = ops[:0]
	}
	return out, nil
}

func (s *Store) parseIndex(k rooms.ShardKey, key string) (int64, string, error) {
	rest := strings.TrimPrefix(key, s.indexPrefix(k))
	expS, id, ok := strings.Cut(rest, "/")
	exp, err := strconv.ParseInt(expS, 10, 64)
	if !ok || err != nil {
		return 0, "", &lease.CorruptError{Where: fmt.Sprintf("etcd key %q", key), Reason: "not an expiry index entry"}
	}
	return exp, id, nil
}

// WriteRooms implements rooms.RoomStore: one transaction, conditional on the head's and every
// room's version (a collected room: on its index entry still being there, i.e. its expiry
// unchanged), that writes the head, the rooms and their index entries.
func (s *Store) WriteRooms(ctx context.Context, k rooms.ShardKey, w rooms.RoomsWrite) (lease.Version, error) {
	head := s.headKey(k)
	var cmps []clientv3.Cmp
	var ops []clientv3.Op
	if w.Head != nil {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(head), "=", int64(w.HeadVersion)))
		ops = append(ops, clientv3.OpPut(head, string(w.Head)))
	}
	for _, r := range w.Put {
		key, idx := s.roomKey(k, r.ID), s.indexKey(k, r.ExpiresMs, r.ID)
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", int64(r.Version)))
		ops = append(ops, clientv3.OpPut(key, string(r.Data)))
		if old := s.indexKey(k, r.PrevExpiresMs, r.ID); r.Version != 0 && old != idx {
			ops = append(ops, clientv3.OpDelete(old))
		}
		ops = append(ops, clientv3.OpPut(idx, strconv.Itoa(r.Size)))
	}
	for _, r := range w.Delete {
		key, idx := s.roomKey(k, r.ID), s.indexKey(k, r.ExpiresMs, r.ID)
		if r.Version != 0 {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", int64(r.Version)))
		} else {
			cmps = append(cmps, clientv3.Compare(clientv3.Version(idx), ">", 0))
		}
		ops = append(ops, clientv3.OpDelete(key), clientv3.OpDelete(idx))
	}
	ctx, cancel := s.request(ctx)
	defer cancel()
	resp, err := s.writes.do(ctx, cmps, ops, nil)
	if err != nil {
		return 0, classify("write rooms", head, err, resp.Unsettled)
	}
	if !resp.Succeeded {
		return 0, refused("write rooms of", head, resp.Unsettled, fmt.Errorf("etcd store: write rooms of %q: %w", head, lease.ErrConflict))
	}
	return lease.Version(resp.Revision), nil
}

// CountRooms implements rooms.RoomStore from the expiry index: per shard, the entries above
// after — counted by etcd without returning them — and the first of them. Shards beyond one
// transaction are counted in further ones at the same revision.
func (s *Store) CountRooms(ctx context.Context, namespace string, shards int, after int64) (int, int64, error) {
	total, first := 0, int64(0)
	var rev int64
	for lo := 0; lo < shards; lo += maxTxnOps {
		var ops []clientv3.Op
		for i := lo; i < min(shards, lo+maxTxnOps); i++ {
			k := rooms.ShardKey{Namespace: namespace, Index: i}
			opts := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(s.indexPrefix(k))),
				clientv3.WithLimit(1), clientv3.WithKeysOnly()}
			if rev > 0 {
				opts = append(opts, clientv3.WithRev(rev))
			}
			ops = append(ops, clientv3.OpGet(s.indexPrefix(k)+expiryKey(after+1), opts...))
		}
		rctx, cancel := s.request(ctx)
		resp, err := s.reads.do(rctx, nil, ops, nil)
		cancel()
		if err != nil {
			return 0, 0, classify("count rooms", s.roomsPrefix(namespace), err, false)
		}
		rev = cmp.Or(rev, resp.Revision)
		for i, r := range resp.Responses {
			rr := r.GetResponseRange()
			total += int(rr.Count)
			if len(rr.Kvs) > 0 {
				exp, _, err := s.parseIndex(rooms.ShardKey{Namespace: namespace, Index: lo + i}, string(rr.Kvs[0].Key))
				if err != nil {
					return 0, 0, err
				}
				if first == 0 || exp < first {
					first = exp
				}
			}
		}
	}
	return total, first, nil
}
