package filestore

import (
	"sync"
	"sync/atomic"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// maxKnownNamespaces bounds knownNamespaces: a process serves a few namespaces, and one that is
// asked about many more checks the others each time, as before.
const maxKnownNamespaces = 256

// knownNamespaces remembers the namespaces that passed lease.ValidateNamespace, whose regular
// expression every rooms store call ran — 2 % of the server's CPU per request.
type knownNamespaces struct {
	valid sync.Map // namespace → struct{}
	n     atomic.Int64
}

// validate is lease.ValidateNamespace, remembered for the namespaces that pass.
func (k *knownNamespaces) validate(namespace string) error {
	if _, ok := k.valid.Load(namespace); ok {
		return nil
	}
	if err := lease.ValidateNamespace(namespace); err != nil {
		return err
	}
	if k.n.Add(1) <= maxKnownNamespaces {
		k.valid.Store(namespace, struct{}{})
	}
	return nil
}
