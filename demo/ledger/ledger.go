package ledger

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileName is the ledger's file inside its directory.
const FileName = "ledger.jsonl"

// recentAccepted is how many accepted entries Snapshot returns (the page shows the latest).
const recentAccepted = 50

// maxRejectedKept bounds the rejected entries kept in memory; all stay in the file.
const maxRejectedKept = 1000

// Ledger is the fenced, persistent list of writes. Its methods are safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	file     *os.File // opened O_APPEND
	lock     *os.File // the directory's lock, held until Close
	size     int64    // the file's length after the last record
	path     string
	election Election
	now      func() time.Time
	seq      uint64
	highest  uint64
	accepted []Entry // the latest recentAccepted, oldest first
	rejected []Entry // the latest maxRejectedKept, oldest first
	counts   Counts
	// afterSync runs after a record is synced and before Append returns: the tests' crash point.
	afterSync func()
}

// Counts are the totals since the ledger's file was created.
type Counts struct {
	// Accepted is the number of accepted writes.
	Accepted uint64 `json:"accepted"`
	// Rejected is the number of rejected writes, stale or not issued.
	Rejected uint64 `json:"rejected"`
	// NotIssued is the number of rejected writes whose fence the election had not issued.
	NotIssued uint64 `json:"not_issued"`
}

// Snapshot is what the page shows.
type Snapshot struct {
	// Highest is the highest accepted fence (0 before the first write).
	Highest uint64 `json:"highest_fence"`
	// Counts are the totals.
	Counts Counts `json:"counts"`
	// Accepted are the latest accepted entries, newest first.
	Accepted []Entry `json:"accepted"`
	// Rejected are the rejected entries, newest first.
	Rejected []Entry `json:"rejected"`
}

// Option configures Open.
type Option func(*Ledger)

// WithClock sets the clock that stamps ReceivedAt (default time.Now).
func WithClock(now func() time.Time) Option { return func(l *Ledger) { l.now = now } }

// Open opens (creating it if needed) the ledger kept in dir and replays its file; election
// tells it which fences were issued. It takes the directory's exclusive lock first: while one
// Ledger has dir open, every other Open, in this process or another, fails with ErrInUse naming
// the holder.
func Open(dir string, election Election, opts ...Option) (*Ledger, error) {
	if election == nil {
		return nil, errors.New("ledger: Open needs the election whose fences it accepts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ledger: create the data directory %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	// O_APPEND: every record goes to the file's end, whatever else has written to it.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("ledger: open %s: %w", path, err)
	}
	l := &Ledger{file: f, lock: lock, path: path, election: election, now: time.Now}
	for _, o := range opts {
		o(l)
	}
	if err := l.replay(); err != nil {
		f.Close()
		lock.Close()
		return nil, err
	}
	return l, nil
}

// replay reads every record and cuts off a torn tail: a last line without a newline, or the
// NULs a crash image ends in (crashTail).
func (l *Ledger) replay() error {
	data, err := io.ReadAll(l.file)
	if err != nil {
		return fmt.Errorf("ledger: read %s: %w", l.path, err)
	}
	good := 0 // bytes of complete, parsed records
	for line := 1; good < len(data); line++ {
		rest := data[good:]
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			// No newline: the append that wrote it never finished its sync, so it was never
			// acknowledged; dropping it loses nothing anybody was told about.
			break
		}
		var e Entry
		if err := json.Unmarshal(rest[:end], &e); err != nil || e.Seq == 0 {
			if crashTail(rest) {
				break
			}
			return fmt.Errorf("%w: %s line %d cannot be parsed (%v); the ledger writes nothing over it: move the file away to start an empty ledger", ErrDamaged, l.path, line, err)
		}
		if e.Fence > MaxFence {
			return fmt.Errorf("%w: %s line %d has fence %d, above %d (2^53-1), the largest the election issues: a write no leader made, which an older demo serve accepted from anyone; the ledger writes nothing over it: move the file away to start an empty ledger", ErrDamaged, l.path, line, e.Fence, uint64(MaxFence))
		}
		l.record(e)
		good += end + 1
	}
	if good < len(data) {
		if err := l.file.Truncate(int64(good)); err != nil {
			return fmt.Errorf("ledger: cut the torn last record of %s: %w", l.path, err)
		}
	}
	l.size = int64(good)
	return nil
}

// crashTail reports whether the rest of a file, from an unparseable line on, is the tail of a
// crash image: every complete line in it holds a NUL byte — space the file's size already
// covered when the crash came but its data never reached, possibly ending in the newline of the
// record being appended. The ledger never writes a NUL (JSON escapes control characters), so
// such lines were never acknowledged; before a complete record, they would be damage.
func crashTail(rest []byte) bool {
	for {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			return true // a torn line without a newline ends the file
		}
		if bytes.IndexByte(rest[:end], 0) < 0 {
			return false
		}
		rest = rest[end+1:]
	}
}

// record adds e to the in-memory view.
func (l *Ledger) record(e Entry) {
	l.seq = max(l.seq, e.Seq)
	if e.Accepted {
		l.highest = max(l.highest, e.Fence)
		l.counts.Accepted++
		l.accepted = keepLast(append(l.accepted, e), recentAccepted)
		return
	}
	e.Reason = cmp.Or(e.Reason, Stale) // the only reason older versions knew
	l.counts.Rejected++
	if e.Reason == NotIssued {
		l.counts.NotIssued++
	}
	l.rejected = keepLast(append(l.rejected, e), maxRejectedKept)
}

func keepLast(s []Entry, n int) []Entry {
	if len(s) > n {
		return append(s[:0:0], s[len(s)-n:]...)
	}
	return s
}

// Append applies the fencing rule to w, records the outcome durably and returns it. A write is
// accepted when its fence is at least the highest accepted fence and at most the highest the
// election has issued. Otherwise it is recorded as rejected — Stale with Highest set, or
// NotIssued with Issued set — which is an answer, not an error. Errors are invalid writes
// (ErrInvalidWrite), an election that cannot be read (ErrElectionUnknown) and failures to
// record: then nothing was recorded or acknowledged.
//
// Every accepted fence was issued, so a fence below the highest accepted one is stale without
// asking the election: a stale leader is answered at once, whatever the controllers do.
func (l *Ledger) Append(ctx context.Context, w Write) (Entry, error) {
	if err := w.validate(); err != nil {
		return Entry{}, err
	}
	l.mu.Lock()
	stale := w.Fence < l.highest
	l.mu.Unlock()
	var issued uint64
	if !stale {
		// Outside the lock: the election may be read, and the highest accepted fence only
		// grows meanwhile (a write that turns stale is rejected below).
		var err error
		if issued, err = l.election.Issued(ctx, w.Fence); err != nil {
			return Entry{}, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := Entry{Write: w, Seq: l.seq + 1, ReceivedAt: l.now().UTC(), Accepted: true}
	switch {
	case w.Fence < l.highest:
		e.Accepted, e.Reason, e.Highest = false, Stale, l.highest
	case w.Fence > issued:
		e.Accepted, e.Reason, e.Issued = false, NotIssued, issued
	}
	line, err := json.Marshal(e)
	if err != nil {
		return Entry{}, fmt.Errorf("ledger: encode a record: %w", err)
	}
	if err := l.appendLine(append(line, '\n')); err != nil {
		return Entry{}, err
	}
	l.record(e)
	if l.afterSync != nil {
		l.afterSync()
	}
	return e, nil
}

// appendLine appends one record and syncs it. A failed write is cut off again, so the file
// never keeps half a record in front of the next one.
func (l *Ledger) appendLine(line []byte) error {
	if _, err := l.file.Write(line); err != nil {
		return errors.Join(fmt.Errorf("ledger: append to %s: %w", l.path, err), l.cut())
	}
	if err := l.file.Sync(); err != nil {
		return errors.Join(fmt.Errorf("ledger: sync %s: %w", l.path, err), l.cut())
	}
	l.size += int64(len(line))
	return nil
}

// cut truncates the file to its length after the last complete record.
func (l *Ledger) cut() error {
	if err := l.file.Truncate(l.size); err != nil {
		return fmt.Errorf("ledger: cut a failed append from %s: %w", l.path, err)
	}
	return nil
}

// Snapshot returns the highest fence, the totals, the latest accepted entries and the
// rejected ones, newest first.
func (l *Ledger) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Snapshot{Highest: l.highest, Counts: l.counts, Accepted: newestFirst(l.accepted), Rejected: newestFirst(l.rejected)}
}

func newestFirst(s []Entry) []Entry {
	out := make([]Entry, len(s))
	for i, e := range s {
		out[len(s)-1-i] = e
	}
	return out
}

// Close closes the file, then releases the directory's lock.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.file.Close(), l.lock.Close())
}
