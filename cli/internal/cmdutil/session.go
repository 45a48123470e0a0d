package cmdutil

import (
	"errors"
	"fmt"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/cli/internal/incarnation"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// Session is what a command acting on one election works with.
type Session struct {
	// Config is the configuration the election was opened with.
	Config *config.Config
	// Election is the opened election.
	Election *lease.Election
	// Store is its store; Close releases it.
	Store lease.Store
	Close func()
}

// Unreachable restates err, when it says the store did not answer, cause first: which store,
// why in a few words, and what to do (still exit 5). Other errors pass unchanged.
func (s *Session) Unreachable(err error) error {
	if !errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrAmbiguous) {
		return err
	}
	start := "start it"
	if s.Config.Store == config.StoreSwarm {
		start = "start that Docker engine, point DOCKER_HOST at a Swarm manager's"
	}
	fix := fmt.Sprintf("%s, or set --%s (now from %s) to a store that answers", start, config.FlagName(config.KeyStore), s.Config.Source(config.KeyStore))
	return &UnreachableError{What: s.Store.Describe(), Fix: fix, Err: err}
}

// OpenElection opens the election cfg names; extra options (a metrics recorder, the
// incarnation) go to the election. This host's witness proves gone the holders of this host
// whose processes have ended (incarnation.Host).
func OpenElection(cfg *config.Config, extra ...lease.Option) (*Session, error) {
	if err := cfg.RequireElection(); err != nil {
		return nil, Usage(err)
	}
	store, closeStore, err := OpenStore(cfg)
	if err != nil {
		return nil, err
	}
	e, err := lease.New(store, cfg.Namespace, cfg.Identity, append([]lease.Option{
		lease.WithTTL(cfg.TTL), lease.WithMaxCASRetries(cfg.MaxCASRetries), lease.WithMaxClockSkew(cfg.MaxClockSkew),
		lease.WithWitness(incarnation.Host{})}, extra...)...)
	if err != nil {
		closeStore()
		return nil, Usage(err)
	}
	return &Session{Config: cfg, Election: e, Store: store, Close: closeStore}, nil
}

// OpenStore opens the store a configuration names; the function it returns closes it (the etcd
// store's connections). There is no fallback between stores: a Swarm store that cannot reach a
// manager, or an etcd store whose cluster does not answer, fails on first use with a clear
// error.
func OpenStore(cfg *config.Config) (lease.Store, func(), error) {
	switch cfg.Store {
	case config.StoreEtcd:
		s, err := etcdstore.New(cfg.Etcd)
		switch {
		case err == nil:
			return s, func() { _ = s.Close() }, nil
		case PermissionDenied(err): // the user and password, checked as the client connects
			return nil, nil, fmt.Errorf("etcd refused the user %q (%s from %s, %s from %s): %w", cfg.Etcd.Username,
				config.KeyEtcdUsername, cfg.Source(config.KeyEtcdUsername), config.KeyEtcdPassword, cfg.Source(config.KeyEtcdPassword), err)
		case errors.Is(err, lease.ErrUnavailable), errors.Is(err, lease.ErrNoQuorum):
			return nil, nil, err
		}
		return nil, nil, Usage(fmt.Errorf("invalid %s (from %s): %w", config.KeyStore, cfg.Source(config.KeyStore), err))
	case config.StoreFile:
		s, err := filestore.New(cfg.StoreDir)
		if err != nil {
			err = fmt.Errorf("%s (from %s): %w", config.KeyStore, cfg.Source(config.KeyStore), err)
			if PermissionDenied(err) || StoreFull(err) { // the setting is fine; the directory is not
				return nil, nil, err
			}
			return nil, nil, Usage(fmt.Errorf("invalid %w", err))
		}
		return s, func() {}, nil
	case config.StoreMemory:
		return memstore.New(), func() {}, nil
	default:
		s, err := swarmstore.NewFromEnv()
		if err != nil {
			return nil, nil, Usage(err)
		}
		return s, func() { s.Close() }, nil
	}
}
