//go:build !linux

package incarnation

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Host is this host's witness; outside Linux it proves nothing (there is no boot ID to tell
// this host's records by), and terms end by expiry.
type Host struct{}

var _ lease.Witness = Host{}

// Gone implements lease.Witness: never.
func (Host) Gone(context.Context, lease.Record) (string, time.Duration) { return "", 0 }

func bootID() string                       { return "" }
func pidNamespace() uint64                 { return 0 }
func processStart(int) (uint64, int, bool) { return 0, 0, false }
func unheld(string) bool                   { return false }
func createLock(string, string) (*os.File, lease.FileID, error) {
	return nil, lease.FileID{}, errors.New("no lock outside Linux")
}

// InitOf is false outside Linux.
func InitOf(string) bool { return false }
