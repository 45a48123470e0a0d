package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LockName is the lock file inside the ledger's directory: held exclusively while a Ledger is
// open, and holding who opened it ("pid N on host H since T"), so that a refused server can
// name the one in the way.
const LockName = "ledger.lock"

// maxHolderLen bounds how much of a lock file a refused Open reads.
const maxHolderLen = 256

// lockDir takes the directory's exclusive lock, or fails with ErrInUse naming the holder. The
// lock is the operating system's (flock on Unix, an unshared handle on Windows): it goes with
// the process, so a crashed server leaves no stale lock behind.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockName)
	f, held, err := lockFile(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: lock %s: %w", path, err)
	}
	if held {
		return nil, fmt.Errorf("%w: %s is held by %s: stop that demo serve first (two servers on one ledger lose each other's writes)", ErrInUse, path, readHolder(path))
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("pid %d on host %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(holder), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger: record the holder in %s: %w", path, err)
	}
	return f, nil
}

// readHolder is the holder a lock file records, or a note why it is unknown.
func readHolder(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "another process (its lock file cannot be read: " + err.Error() + ")"
	}
	defer f.Close()
	buf := make([]byte, maxHolderLen)
	n, _ := f.Read(buf)
	if holder := strings.TrimSpace(string(buf[:n])); holder != "" {
		return holder
	}
	return "another process (that has not recorded itself yet)"
}
