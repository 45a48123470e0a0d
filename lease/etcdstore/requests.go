package etcdstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/regbo/lfp-swarm-lease/lease"
)

var _ lease.RequestReporter = (*Store)(nil)

// requestObservers are the functions OnRequest registered, called by the client's unary
// interceptor for every request to a member. The interceptor runs inside the client's retry
// interceptor, so each attempt — each request a member answers, or fails — counts once.
type requestObservers struct {
	mu  sync.Mutex
	fns atomic.Pointer[[]func(op string, took time.Duration, err error)]
}

// OnRequest implements lease.RequestReporter: op is the RPC's name ("Range", "Txn",
// "DeleteRange", "Status", "Authenticate", …); watches, which are streams, are not requests.
func (s *Store) OnRequest(fn func(op string, took time.Duration, err error)) {
	o := s.observers
	o.mu.Lock()
	defer o.mu.Unlock()
	var fns []func(string, time.Duration, error)
	if old := o.fns.Load(); old != nil {
		fns = append(fns, *old...)
	}
	fns = append(fns, fn)
	o.fns.Store(&fns)
}

// unary is the gRPC interceptor that times every request and hands it to the observers.
func (o *requestObservers) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	fns := o.fns.Load()
	if fns == nil {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	took := time.Since(start)
	reported := err
	if err != nil {
		if kind := kindOf(err); kind != nil {
			reported = fmt.Errorf("%w: %w", kind, err)
		}
	}
	op := method[strings.LastIndexByte(method, '/')+1:]
	for _, fn := range *fns {
		fn(op, took, reported)
	}
	return err
}
