// Package incarnation gives a process of lfp-swarm-lease its incarnation (lease.Incarnation):
// what tells it from every other process under its identity, and what can prove it gone. It
// also holds the witness of this host (Host): on Linux, it proves gone the incarnations of this
// host whose processes observably ended — a `run` whose lock nothing holds any more, a one-shot
// command's caller that has exited.
package incarnation

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Run is the incarnation of a long-lived contender (`run`): a random ID, and on Linux a lock
// file that run holds locked from its start, before any term names it, and that its guards and
// commands inherit (supervisor.Spec.Hold) — locked for as long as any of them lives.
type Run struct {
	// Incarnation is what run's terms record.
	Incarnation lease.Incarnation
	// Lock is the locked file; nil where there is none (not Linux, or no directory to keep it
	// in): then no witness can prove this incarnation gone, and its terms end by expiry.
	Lock *os.File
	// Earlier: the directory held another incarnation's lock — a run ran here before (in a
	// container: this container was started again).
	Earlier bool
}

// ForRun returns a new incarnation of `run`, its lock created in dir (Dir(), when empty). A
// lock that cannot be made is no error: the incarnation then has none (err says why, for the
// log).
func ForRun(dir string) (*Run, error) {
	r := &Run{Incarnation: lease.Incarnation{ID: lease.NewIncarnationID(), Boot: bootID()}}
	if r.Incarnation.Boot == "" {
		return r, nil
	}
	if dir == "" {
		dir = Dir()
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.lock")); len(matches) > 0 {
		r.Earlier = true
	}
	lock, id, err := createLock(dir, r.Incarnation.ID)
	if err != nil {
		return r, fmt.Errorf("incarnation: no lock in %s (a restart of this process is then taken over only when its term expires): %w", dir, err)
	}
	r.Lock, r.Incarnation.Lock = lock, id
	sweep(dir, lock.Name())
	return r, nil
}

// Close removes the lock file and closes it: for a run that exits with no term of its left
// to prove anything about (every one released or handed over, or none ever won). The guards
// and commands that inherited the lock have ended by then.
func (r *Run) Close() {
	if r.Lock != nil {
		_ = os.Remove(r.Lock.Name())
		_ = r.Lock.Close()
	}
}

// OneShot returns the incarnation of a one-shot command (try-acquire): its caller, the parent
// process, whose work the term is. Every call of one caller is one incarnation — it takes its own
// term over at once — and, observed on this host, the caller's exit with nothing left in its
// process group (where what it started in the background runs on) proves the term's work gone.
func OneShot() lease.Incarnation {
	ppid := os.Getppid()
	inc := lease.Incarnation{Boot: bootID()}
	if inc.Boot != "" && ppid > 0 {
		if start, group, ok := processStart(ppid); ok {
			inc.PID, inc.PIDStart, inc.PIDNS, inc.PIDGroup = ppid, start, pidNamespace(), group
		}
	}
	// Derived, not random: the caller's next call is the same incarnation.
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%d/%d", inc.Boot, inc.PIDNS, inc.PID, inc.PIDStart)))
	inc.ID = hex.EncodeToString(sum[:12])
	return inc
}

// Dir is where `run` keeps its incarnation's lock: $XDG_RUNTIME_DIR/lfp-swarm-lease when set,
// else /run/lfp-swarm-lease for root, else lfp-swarm-lease-<uid> in the temporary directory.
func Dir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "lfp-swarm-lease")
	}
	if os.Geteuid() == 0 {
		return "/run/lfp-swarm-lease"
	}
	return filepath.Join(os.TempDir(), "lfp-swarm-lease-"+strconv.Itoa(os.Geteuid()))
}

// staleLock is how old a lock file nothing holds must be before a new run removes it: far
// beyond any term's TTL, so that no live record can still name it.
const staleLock = 24 * time.Hour

// sweep removes the lock files in dir that nothing holds and that are older than staleLock,
// but for keep: those of runs killed long ago.
func sweep(dir, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, ent := range entries {
		path := filepath.Join(dir, ent.Name())
		if path == keep || filepath.Ext(path) != ".lock" {
			continue
		}
		if info, err := ent.Info(); err == nil && time.Since(info.ModTime()) > staleLock && unheld(path) {
			_ = os.Remove(path)
		}
	}
}
