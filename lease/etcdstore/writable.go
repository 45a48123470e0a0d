package etcdstore

import (
	"context"
	"errors"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

var _ rooms.WriteChecker = (*Store)(nil)

// CheckWritable implements rooms.WriteChecker from the cluster's alarms, which a linearizable
// read does not show: with NOSPACE raised (a member's backend reached its quota) etcd answers
// reads but refuses every write until an operator frees space and disarms the alarm — an error
// wrapping lease.ErrStoreFull; with CORRUPT raised (members disagree on their data) one wrapping
// lease.ErrUnavailable. A user who may not list the alarms leaves the check to the reads (nil);
// a cluster that does not answer fails it.
func (s *Store) CheckWritable(ctx context.Context) error {
	ctx, cancel := s.request(ctx)
	defer cancel()
	resp, _, err := send(ctx, s.members, false, func(ctx context.Context, m *member) (*pb.AlarmResponse, error) {
		return m.maint.Alarm(ctx, &pb.AlarmRequest{Action: pb.AlarmRequest_GET})
	})
	if err != nil {
		if errors.Is(kindOf(err), lease.ErrPermission) {
			return nil
		}
		return classify("list alarms", s.opts.Prefix, err, false)
	}
	for _, a := range resp.Alarms {
		switch a.Alarm {
		case pb.AlarmType_NOSPACE:
			return fmt.Errorf("etcd store: member %x raised NOSPACE: the cluster refuses writes until space is freed (compact, defragment, then etcdctl alarm disarm): %w",
				a.MemberID, lease.ErrStoreFull)
		case pb.AlarmType_CORRUPT:
			return fmt.Errorf("etcd store: member %x raised CORRUPT: the members' data differ; the cluster needs an operator: %w", a.MemberID, lease.ErrUnavailable)
		}
	}
	return nil
}
