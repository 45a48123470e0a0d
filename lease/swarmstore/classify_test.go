package swarmstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// TestClassify checks the mapping of the Swarm API's error texts (Docker 20.10; HTTP 500
// with the text only) to the lease sentinels. Unreachable engines and non-managers are
// exercised for real in the store and CLI tests; these texts need a multi-manager fault.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		msg   string
		err   error
		write bool
		want  []error
	}{
		{msg: "Error response from daemon: rpc error: code = Unknown desc = update out of sequence", write: true, want: []error{lease.ErrConflict}},
		{msg: "Error response from daemon: The swarm does not have a leader. It's possible that too few managers are online. Make sure more than half of the managers are online.", write: true, want: []error{lease.ErrNoQuorum}},
		{msg: "Error response from daemon: rpc error: code = Unknown desc = raft: failed to process the request: node lost leader status", write: true, want: []error{lease.ErrAmbiguous, lease.ErrNoQuorum}},
		{msg: "Error response from daemon: rpc error: code = Unknown desc = raft: failed to process the request: node lost leader status", write: false, want: []error{lease.ErrNoQuorum}},
		{msg: "Error response from daemon: rpc error: code = DeadlineExceeded desc = context deadline exceeded", write: true, want: []error{lease.ErrAmbiguous}},
		{msg: "Error response from daemon: rpc error: code = DeadlineExceeded desc = context deadline exceeded", write: false, want: []error{lease.ErrNoQuorum}},
		{msg: `Error response from daemon: This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.`, want: []error{lease.ErrNotManager}},
		{msg: "Error response from daemon: This node is not a swarm manager. Manager is being prepared or has trouble connecting to the cluster.", write: true, want: []error{lease.ErrUnavailable}},
		{err: fmt.Errorf("request: %w", context.Canceled), write: true, want: []error{lease.ErrAmbiguous}},
	} {
		err := tc.err
		if err == nil {
			err = errors.New(tc.msg)
		}
		got := classify(err, tc.write)
		for _, w := range tc.want {
			if !errors.Is(got, w) {
				t.Errorf("classify(%q, write=%v) = %v, want it to match %v", err, tc.write, got, w)
			}
		}
		if slices.Contains(tc.want, lease.ErrUnavailable) && errors.Is(got, lease.ErrNotManager) {
			t.Errorf("classify(%q) = %v: a manager that is starting is not a worker", err, got)
		}
		if tc.write == false && errors.Is(got, lease.ErrAmbiguous) {
			t.Errorf("classify(%q) of a read is ambiguous", err)
		}
	}
}
