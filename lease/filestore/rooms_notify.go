package filestore

import (
	"context"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// NotifyShard implements rooms.ShardNotifier with the platform's file notification: every
// write, creation or removal of one of the shard's slot files notifies.
func (s *Store) NotifyShard(ctx context.Context, key rooms.ShardKey) (<-chan struct{}, error) {
	if err := lease.ValidateNamespace(key.Namespace); err != nil {
		return nil, err
	}
	return s.watchFile(ctx, s.slotPath(key, 0), s.slotPath(key, 1))
}
