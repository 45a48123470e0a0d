package filestore

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"

	"github.com/regbo/lfp-swarm-lease/lease"
)

var _ lease.Notifier = (*Store)(nil)

// Notify implements lease.Notifier with the platform's file notification (inotify on Linux,
// kqueue on macOS): every replacement or removal of the election's file notifies.
func (s *Store) Notify(ctx context.Context, namespace string) (<-chan struct{}, error) {
	if err := lease.ValidateNamespace(namespace); err != nil {
		return nil, err
	}
	return s.watchFile(ctx, s.path(namespace))
}

// watchFile notifies every replacement or removal of path (a file in the store's directory)
// until ctx ends.
func (s *Store) watchFile(ctx context.Context, paths ...string) (<-chan struct{}, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("file store: watch: %w", err)
	}
	// The directory, not the file: a rename replaces the file's inode, which a watch on the
	// file itself would lose.
	if err := w.Add(s.dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("file store: watch %s: %w", s.dir, err)
	}
	targets := map[string]bool{}
	for _, p := range paths {
		targets[filepath.Clean(p)] = true
	}
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
				if targets[filepath.Clean(ev.Name)] {
					lease.Signal(ch)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow may have dropped events: wake the consumer to read.
				lease.Signal(ch)
			}
		}
	}()
	return ch, nil
}
