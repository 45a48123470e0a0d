//go:build !unix && !windows

package ledger

import (
	"errors"
	"os"
)

// lockFile: this system has no file lock the ledger knows, and an unlocked ledger can lose
// acknowledged writes, so it does not open.
func lockFile(string) (*os.File, bool, error) {
	return nil, false, errors.New("no exclusive file lock on this system")
}
