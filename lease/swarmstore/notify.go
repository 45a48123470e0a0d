package swarmstore

import (
	"context"
	"time"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/timing"
)

var _ lease.Notifier = (*Store)(nil)

// eventsRetry is the pause before reopening a failed event stream.
const eventsRetry = time.Second

// Notify implements lease.Notifier with Docker's event stream: every create, update or remove
// of the anchor service notifies (Swarm emits an update even for a label-only write, 4–10 ms
// after it). The stream is reopened when it fails, with a notification each time since events
// may have been missed. It can also stall silently: consumers poll as well.
func (s *Store) Notify(ctx context.Context, namespace string) (<-chan struct{}, error) {
	return s.notifyService(ctx, AnchorName(namespace)), nil
}

// notifyService is Notify for any service name: the event stream, reopened after a failure
// (with a notification, since events may have been missed) until ctx ends.
func (s *Store) notifyService(ctx context.Context, name string) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		for ctx.Err() == nil {
			res := s.docker.Events(ctx, client.EventsListOptions{
				Filters: make(client.Filters).Add("type", "service").Add("service", name),
			})
			s.pump(ctx, res, ch)
			lease.Signal(ch)
			_ = timing.Sleep(ctx, eventsRetry)
		}
	}()
	return ch
}

// pump forwards one event stream's messages until it fails or ctx ends.
func (s *Store) pump(ctx context.Context, res client.EventsResult, ch chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-res.Messages:
			if !ok {
				return
			}
			lease.Signal(ch)
		case <-res.Err:
			return
		}
	}
}
