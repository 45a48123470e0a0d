package filestore

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// NotifyShard implements rooms.ShardNotifier with the platform's file notification: every
// replacement or removal of the shard's file notifies.
func (s *Store) NotifyShard(ctx context.Context, key rooms.ShardKey) (<-chan struct{}, error) {
	if err := lease.ValidateNamespace(key.Namespace); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("file store: watch: %w", err)
	}
	// The directory, not the file: a rename replaces the file's inode.
	if err := w.Add(s.dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("file store: watch %s: %w", s.dir, err)
	}
	target := filepath.Clean(s.shardPath(key))
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) == target {
					lease.Signal(ch)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				lease.Signal(ch) // an overflow may have dropped events
			}
		}
	}()
	return ch, nil
}
