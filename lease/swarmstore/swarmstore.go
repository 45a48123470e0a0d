// Package swarmstore keeps lease records in Docker Swarm: each election is a zero-replica
// "anchor" service whose labels hold the record, updated by compare-and-swap on the service's
// version index. Swarm's Raft log makes every write durable and ordered; no database is needed.
//
// The store needs a Swarm manager's Docker API. It never schedules a task: the anchor has zero
// replicas, and label-only updates restart nothing. Registry lookups are off for every create
// and update.
package swarmstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// AnchorImage is the image named in the anchor's spec. It is never pulled or run: the anchor has
// zero replicas and registry lookups are off.
const AnchorImage = "busybox:latest"

// Store keeps elections as anchor services of one Swarm.
type Store struct {
	docker *client.Client

	mu sync.Mutex
	// specs caches the last spec read or written per anchor, keyed by version, so that an
	// update right after a read needs no second read: Swarm wants the whole spec on update.
	specs map[string]cachedSpec
	// proven latches the evidence a term's holder is gone, by its incarnation (evidence.go):
	// the last term proven only.
	proven map[string]string
}

type cachedSpec struct {
	id      string
	version lease.Version
	spec    swarm.ServiceSpec
}

var (
	_ lease.Store        = (*Store)(nil)
	_ lease.BlindUpdater = (*Store)(nil)
)

// New returns a store that uses docker, which must talk to a Swarm manager.
func New(docker *client.Client) *Store {
	return &Store{docker: docker, specs: map[string]cachedSpec{}}
}

// NewFromEnv returns a store on the Docker engine named by the standard environment
// (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH; the local socket by default). The API
// version is negotiated, down to Docker 20.10.
func NewFromEnv(opts ...client.Opt) (*Store, error) {
	docker, err := client.New(append([]client.Opt{client.FromEnv}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("swarm store: %w", err)
	}
	return New(docker), nil
}

// Docker returns the store's Docker client.
func (s *Store) Docker() *client.Client { return s.docker }

// Describe implements lease.Store.
func (s *Store) Describe() string { return "swarm store at " + s.docker.DaemonHost() }

// Close releases the Docker client's connections.
func (s *Store) Close() error { return s.docker.Close() }

// Load implements lease.Store.
func (s *Store) Load(ctx context.Context, namespace string) (lease.Record, lease.Version, error) {
	name := AnchorName(namespace)
	res, err := s.docker.ServiceInspect(ctx, name, client.ServiceInspectOptions{})
	if err != nil {
		return lease.Record{}, 0, wrap("read", name, classify(err, false))
	}
	svc := res.Service
	if svc.Spec.Name != name {
		// Docker also resolves ID prefixes; only an exact name is ours.
		return lease.Record{}, 0, wrap("read", name, lease.ErrNotFound)
	}
	rec, err := decode(name, namespace, svc.Spec.Labels)
	if err != nil {
		return lease.Record{}, 0, err
	}
	ver := lease.Version(svc.Version.Index)
	s.remember(name, cachedSpec{id: svc.ID, version: ver, spec: svc.Spec})
	return rec, ver, nil
}

// Create implements lease.Store: it creates the zero-replica anchor service.
func (s *Store) Create(ctx context.Context, rec lease.Record) (lease.Version, error) {
	if _, err := s.createService(ctx, AnchorName(rec.Namespace), "anchor", encode(rec, nil)); err != nil {
		return 0, err
	}
	// The create answer has no version: read it back. The create happened whatever the read
	// says: a failed read is "applied, version unknown" (ErrAmbiguous, which the engine settles
	// by reading again), and another write read back is "applied, version not ours" (0).
	cur, ver, err := s.Load(ctx, rec.Namespace)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: created; reading it back failed: %w", lease.ErrAmbiguous, err)
	case !cur.Equal(rec):
		return 0, nil
	}
	return ver, nil
}

// createService creates the zero-replica service name of the anchor image, labelled role, with
// the record's labels, and returns its ID. A conflict is settled by existsOrResent.
func (s *Store) createService(ctx context.Context, name, role string, labels map[string]string) (string, error) {
	replicas := uint64(0)
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: labels},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{Image: AnchorImage, Labels: map[string]string{LabelPrefix + "role": role}},
		},
		Mode: swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
	}
	sent := time.Now()
	res, err := s.docker.ServiceCreate(ctx, client.ServiceCreateOptions{Spec: spec, QueryRegistry: false})
	if err != nil {
		if cerrdefs.IsConflict(err) {
			return "", wrap("create", name, s.existsOrResent(ctx, sent, err))
		}
		return "", wrap("create", name, classify(err, true))
	}
	return res.ID, nil
}

// Update implements lease.Store: a label-only service update conditional on the version index.
func (s *Store) Update(ctx context.Context, rec lease.Record, expected lease.Version) (lease.Version, error) {
	name := AnchorName(rec.Namespace)
	return s.updateLabels(ctx, name, expected,
		func() error { _, _, err := s.Load(ctx, rec.Namespace); return err },
		func(labels map[string]string) map[string]string { return encode(rec, labels) },
		func(labels map[string]string) bool {
			back, err := decode(name, rec.Namespace, labels)
			return err == nil && back.Equal(rec)
		})
}

// UpdateBlind implements lease.BlindUpdater: Update without the read-back, one request sooner.
// A confirmed write leaves its version unknown (0) and the anchor's cached spec is dropped, so
// that the next write reads first.
func (s *Store) UpdateBlind(ctx context.Context, rec lease.Record, expected lease.Version) (lease.Version, error) {
	name := AnchorName(rec.Namespace)
	return s.updateLabels(ctx, name, expected,
		func() error { _, _, err := s.Load(ctx, rec.Namespace); return err },
		func(labels map[string]string) map[string]string { return encode(rec, labels) },
		nil)
}

// updateLabels is the conditional, label-only update of service name that anchors and room
// shards share. reload reads the service through the store (refreshing the spec cache) when the
// cache does not hold version expected; relabel rewrites the labels (keeping others); ours tells
// whether labels read back are this write's — nil for a blind write, which is not read back.
func (s *Store) updateLabels(ctx context.Context, name string, expected lease.Version, reload func() error,
	relabel func(map[string]string) map[string]string, ours func(map[string]string) bool) (lease.Version, error) {
	cached, ok := s.cached(name)
	if !ok || cached.version != expected {
		// Not read through this store at that version: read the current spec first.
		if err := reload(); err != nil {
			return 0, err
		}
		if cached, ok = s.cached(name); !ok || cached.version != expected {
			return 0, wrap("update", name, lease.ErrConflict)
		}
	}
	spec := cached.spec
	labels := make(map[string]string, len(spec.Labels))
	for k, v := range spec.Labels {
		labels[k] = v
	}
	spec.Labels = relabel(labels)
	sent := time.Now()
	_, err := s.docker.ServiceUpdate(ctx, cached.id, client.ServiceUpdateOptions{
		Version:       swarm.Version{Index: uint64(expected)},
		Spec:          spec,
		QueryRegistry: false,
	})
	if err != nil {
		s.forget(name)
		return 0, wrap("update", name, s.conflictOrResent(ctx, sent, classify(err, true)))
	}
	if ours == nil {
		s.forget(name) // the cached spec is of the version this write replaced
		return 0, nil
	}
	return s.readBack(ctx, name, cached.id, ours)
}

// readBack learns the version a create or update made: the Swarm API's answers carry none, and
// the next mutation needs it. Another write may have landed in between: then the version read
// is not this write's, and handing it out would let the caller overwrite that other write from
// a stale record, so the answer is "applied, version unknown" (0). A failed read leaves the
// write applied but its version unknown: ErrAmbiguous, resolved by reading again.
func (s *Store) readBack(ctx context.Context, name, id string, ours func(map[string]string) bool) (lease.Version, error) {
	res, err := s.docker.ServiceInspect(ctx, id, client.ServiceInspectOptions{})
	if err != nil {
		s.forget(name)
		return 0, wrap("read back", name, fmt.Errorf("%w: %w", lease.ErrAmbiguous, classify(err, false)))
	}
	if !ours(res.Service.Spec.Labels) {
		s.forget(name)
		return 0, nil
	}
	ver := lease.Version(res.Service.Version.Index)
	s.remember(name, cachedSpec{id: id, version: ver, spec: res.Service.Spec})
	return ver, nil
}

// Delete implements lease.Store: it removes the anchor service, if it is one.
func (s *Store) Delete(ctx context.Context, namespace string) error {
	name := AnchorName(namespace)
	res, err := s.docker.ServiceInspect(ctx, name, client.ServiceInspectOptions{})
	if err != nil {
		if err = classify(err, false); errors.Is(err, lease.ErrNotFound) {
			return nil
		}
		return wrap("read", name, err)
	}
	if res.Service.Spec.Name != name {
		return nil
	}
	if _, ok := res.Service.Spec.Labels[labelAnchor]; !ok {
		return &lease.CorruptError{Where: fmt.Sprintf("service %q", name), Reason: fmt.Sprintf(
			"the service exists but is not a lease anchor (no label %s); it is never removed", labelAnchor)}
	}
	s.forget(name)
	if _, err := s.docker.ServiceRemove(ctx, res.Service.ID, client.ServiceRemoveOptions{}); err != nil {
		if err = classify(err, true); errors.Is(err, lease.ErrNotFound) {
			return nil
		}
		return wrap("remove", name, err)
	}
	return nil
}

func (s *Store) cached(name string) (cachedSpec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.specs[name]
	return c, ok
}

func (s *Store) remember(name string, c cachedSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs[name] = c
}

func (s *Store) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.specs, name)
}

func wrap(op, service string, err error) error {
	return fmt.Errorf("swarm store: %s service %q: %w", op, service, err)
}

// classify maps a Docker API error to the lease sentinels. Swarm reports a stale version and a
// lost quorum only in the message text (HTTP 500), so those are matched by text (Docker
// 20.10; docs/safety.md §5). A write that timed out or lost its Raft leader may still commit: for writes
// those are ErrAmbiguous as well.
func classify(err error, write bool) error {
	msg := err.Error()
	switch {
	case client.IsErrConnectionFailed(err) && write && brokeAfterSending(err):
		// The engine may have applied the update before the connection broke (it was killed
		// while the write committed through Raft).
		return fmt.Errorf("%w: connection lost: %w", lease.ErrAmbiguous, err)
	case client.IsErrConnectionFailed(err):
		return fmt.Errorf("%w: %w", lease.ErrUnavailable, err)
	case strings.Contains(msg, "update out of sequence"):
		return fmt.Errorf("%w: %w: %w", lease.ErrConflict, errOutOfSequence, err)
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("%w: %w", lease.ErrNotFound, err)
	case strings.Contains(msg, "Manager is being prepared"):
		// A manager whose Swarm component is starting (after an engine restart) or has lost
		// touch with the others: it refused the request itself, and will serve again.
		return fmt.Errorf("%w: %w", lease.ErrUnavailable, err)
	case strings.Contains(msg, "not a swarm manager"), strings.Contains(msg, "not part of a swarm"):
		return fmt.Errorf("%w: %w", lease.ErrNotManager, err)
	case strings.Contains(msg, "does not have a leader"):
		// Refused before reaching Raft: nothing was written.
		return fmt.Errorf("%w: %w", lease.ErrNoQuorum, err)
	case strings.Contains(msg, "lost leader"), strings.Contains(msg, "leadership lost"):
		if write {
			return fmt.Errorf("%w: %w: %w", lease.ErrAmbiguous, lease.ErrNoQuorum, err)
		}
		return fmt.Errorf("%w: %w", lease.ErrNoQuorum, err)
	case write && errors.Is(err, context.Canceled):
		// The request may have reached the manager before the caller gave up.
		return fmt.Errorf("%w: cancelled: %w", lease.ErrAmbiguous, err)
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(msg, "deadline exceeded"):
		if write {
			return fmt.Errorf("%w: timed out: %w", lease.ErrAmbiguous, err)
		}
		return fmt.Errorf("%w: timed out: %w", lease.ErrNoQuorum, err)
	}
	return err
}

// brokeAfterSending reports whether a connection error came after the request could have
// reached the engine: a read or write on an open connection failed (reset, EOF). A failed dial
// (refused, no socket) never sent anything; the Docker client reports those without a cause
// or with a dial error.
func brokeAfterSending(err error) bool {
	if op, ok := errors.AsType[*net.OpError](err); ok {
		return op.Op != "dial"
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
