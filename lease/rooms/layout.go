package rooms

import (
	"context"
	"errors"
	"time"
)

// layout is how the store keeps a shard's rooms, chosen once by New: whole shards as documents
// (docLayout: the memory, file and Swarm stores) or every room under a key of its own beside a
// small head per shard (keyLayout: a RoomStore, etcd). The rules (apply, admit) are the same
// on both. The write loop (Manager.try) begins a batch, reads, decides and writes until it is
// answered, and ends it; only the holder of the shard's queue calls these for the shard.
type layout interface {
	// load reads rooms ids of shard key for a decision that writes nothing (Status).
	load(ctx context.Context, key ShardKey, ids []string) (*shardDoc, error)
	// notify returns the change hints of room roomID (Manager.Notify).
	notify(ctx context.Context, key ShardKey, roomID string) (<-chan struct{}, error)
	// begin starts batch on shard key: what it may be decided on without a read.
	begin(key ShardKey, batch []*op)
	// read returns the attempt's own document, remembered or read from the store.
	read(ctx context.Context, key ShardKey, now time.Time) (*shardDoc, error)
	// decide decides every op of batch on doc, counting the active rooms when one may become
	// active; write tells that the decision changed doc.
	decide(ctx context.Context, key ShardKey, batch []*op, doc *shardDoc, now time.Time) (write bool, err error)
	// write stores the decision. Any reason to decide again is lease.ErrConflict; maybe
	// reports that the write may have landed all the same.
	write(ctx context.Context, key ShardKey, doc *shardDoc) (maybe bool, err error)
	// forget drops what is remembered of the shard, after a failure: the next decision reads.
	forget(key ShardKey)
	end(key ShardKey)
}

// errDecideOnRead is decide's or write's answer to a decision on remembered state that has to
// be taken on what the store holds now: at once, and not as a conflict.
var errDecideOnRead = errors.New("rooms: decide again on a read")
