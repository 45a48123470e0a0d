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

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Run is the incarnation of a long-lived contender (`run`): a random ID, and on Linux a lock
// file in a directory of its election's that run holds locked (shared) from its start, before
// any term names it. Its guards inherit run's lock, and each command gets a lock of its own on the
// same file (supervisor): the file is locked for as long as any of them lives, and a command can
// drop only its own lock.
type Run struct {
	// Incarnation is what run's terms record.
	Incarnation lease.Incarnation
	// Lock is the locked file; nil where there is none (not Linux, or no directory to keep it
	// in): then no witness can prove this incarnation gone, and its terms end by expiry.
	Lock *os.File
	// Earlier: the directory held another incarnation's lock — a run ran here before (in a
	// container: this container was started again).
	Earlier bool
	dir     string
	led     bool
}

// ForRun returns a new incarnation of `run` of the election key names (its store and
// namespace), its lock created in dir (Dir(), when empty), in a directory of that election's. A
// lock that cannot be made is no error: the incarnation then has none (err says why, for the
// log).
func ForRun(dir, key string) (*Run, error) {
	r := &Run{Incarnation: lease.Incarnation{ID: lease.NewIncarnationID(), Boot: bootID()}}
	if r.Incarnation.Boot == "" {
		return r, nil
	}
	if dir == "" {
		dir = Dir()
	}
	sum := sha256.Sum256([]byte(key))
	r.dir = filepath.Join(dir, hex.EncodeToString(sum[:8]))
	if matches, _ := filepath.Glob(filepath.Join(r.dir, "*.lock")); len(matches) > 0 {
		r.Earlier = true
	}
	lock, id, err := createLock(r.dir, r.Incarnation.ID)
	if err != nil {
		return r, fmt.Errorf("incarnation: no lock in %s (a restart of this process is then taken over only when its term expires): %w", r.dir, err)
	}
	r.Lock, r.Incarnation.Lock = lock, id
	return r, nil
}

// Lead marks a term won: the record names this incarnation now, and no other of the election's —
// so the locks nobody holds are of incarnations gone, whose terms are over: they are removed.
func (r *Run) Lead() {
	r.led = true
	if r.Lock == nil {
		return
	}
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return
	}
	for _, ent := range entries {
		path := filepath.Join(r.dir, ent.Name())
		if path != r.Lock.Name() && filepath.Ext(path) == ".lock" && unheld(path) {
			_ = os.Remove(path)
		}
	}
}

// Close ends the incarnation as run exits: a run that never led removes its lock, which no term
// names; one that led keeps it, so that a successor can prove its processes gone should a term
// still name it (a release that failed) — the successor's first term removes it.
func (r *Run) Close() {
	if r.Lock == nil {
		return
	}
	if !r.led {
		_ = os.Remove(r.Lock.Name())
	}
	_ = r.Lock.Close()
}

// OneShot returns the incarnation of a one-shot command (try-acquire) made for caller, the
// process whose work the term is (try-acquire's --caller-pid: the calling script's PID). Every
// call for one caller is one incarnation — it takes that caller's live term over at once — and,
// observed on this host, the caller's exit with nothing left in its process group (where what it
// started in the background runs on) proves the term's work gone. Without a caller (0) every
// call is an incarnation of its own, which nothing proves gone: its terms end by expiry.
func OneShot(caller int) (lease.Incarnation, error) {
	inc := lease.Incarnation{Boot: bootID()}
	if caller <= 0 {
		inc.ID = lease.NewIncarnationID()
		return inc, nil
	}
	start, group, ok := processStart(caller)
	switch {
	case inc.Boot == "": // not Linux: the PID names the caller, and nothing proves it gone
	case !ok:
		return lease.Incarnation{}, fmt.Errorf("no process %d to be the caller: pass the PID of the process whose work the term is (a shell's $$), or none", caller)
	case pidNamespace() != 0:
		inc.PID, inc.PIDStart, inc.PIDNS, inc.PIDGroup = caller, start, pidNamespace(), group
	}
	// Derived, not random: the caller's next call is the same incarnation.
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%d/%d", inc.Boot, pidNamespace(), caller, start)))
	inc.ID = hex.EncodeToString(sum[:12])
	return inc, nil
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
