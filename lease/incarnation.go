package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// An incarnation is one process contending under an identity: a restarted process is a new one,
// under the same holder and task IDs. A live term of another incarnation — the same identity's
// included — is taken over only once it has expired, or once a Witness proves that its holder,
// and every process it started, is gone: a restart never overlaps its predecessor's work, and
// never waits longer than the proof takes. docs/safety.md §4a has the argument.

// Incarnation describes one incarnation as its terms record it: what tells it from every other
// process under its identity, and what can prove it gone. Stores keep it as the text of String,
// opaque to them.
type Incarnation struct {
	// ID tells this incarnation from every other: random for a long-lived contender (`run`),
	// derived from Process for a one-shot command, whose caller is the incarnation.
	ID string
	// Boot is the host's boot ID (Linux): the facts below hold on that host, in that boot.
	Boot string
	// Lock is a file that the incarnation's processes hold locked (flock) for as long as any of
	// them lives; zero when there is none.
	Lock FileID
	// PID is the process whose work the incarnation's terms are (a one-shot command's caller),
	// PIDStart its start time (clock ticks after boot, which tells a reused PID), PIDNS the
	// inode of its PID namespace and PIDGroup its process group, where what it started runs
	// on after it; PID is zero when there is none. The work is gone once the process is, and
	// its group is empty.
	PID      int
	PIDStart uint64
	PIDNS    uint64
	PIDGroup int
	// Container is the ID of the container whose init process (PID 1) the incarnation is — the
	// container of the record's Swarm task — so that the container's end, the task reported
	// ended by its own node, is the incarnation's end and that of every process it started;
	// empty when it is not one.
	Container string
}

// FileID names one file on one host: its device and inode, and the path it was created at.
type FileID struct {
	Dev, Ino uint64
	Path     string
}

// NewIncarnationID returns a fresh random incarnation ID.
func NewIncarnationID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}

// String encodes the incarnation as a query string (keys sorted): one line, any path escaped.
func (i Incarnation) String() string {
	if i.ID == "" {
		return ""
	}
	v := url.Values{"id": {i.ID}}
	if i.Boot != "" {
		v.Set("boot", i.Boot)
	}
	if i.Lock.Path != "" {
		v.Set("lock", fmt.Sprintf("%d:%d:%s", i.Lock.Dev, i.Lock.Ino, i.Lock.Path))
	}
	if i.PID != 0 {
		v.Set("pid", fmt.Sprintf("%d:%d:%d:%d", i.PID, i.PIDStart, i.PIDNS, i.PIDGroup))
	}
	if i.Container != "" {
		v.Set("container", i.Container)
	}
	return v.Encode()
}

// ParseIncarnation reads what String wrote. An empty text is the zero Incarnation: a term
// written by a version that recorded none, of an incarnation nobody can prove gone.
func ParseIncarnation(s string) (Incarnation, error) {
	if s == "" {
		return Incarnation{}, nil
	}
	v, err := url.ParseQuery(s)
	if err != nil || v.Get("id") == "" {
		return Incarnation{}, fmt.Errorf("lease: incarnation %q: not what this version writes", s)
	}
	i := Incarnation{ID: v.Get("id"), Boot: v.Get("boot"), Container: v.Get("container")}
	if l := v.Get("lock"); l != "" {
		var ok bool
		if i.Lock, ok = parseFileID(l); !ok {
			return Incarnation{}, fmt.Errorf("lease: incarnation %q: lock %q is not DEV:INO:PATH", s, l)
		}
	}
	if p := v.Get("pid"); p != "" {
		var pid int
		if n, _ := fmt.Sscanf(p, "%d:%d:%d:%d", &pid, &i.PIDStart, &i.PIDNS, &i.PIDGroup); n != 4 || pid <= 0 || i.PIDGroup <= 0 {
			return Incarnation{}, fmt.Errorf("lease: incarnation %q: pid %q is not PID:START:PIDNS:PGID", s, p)
		}
		i.PID = pid
	}
	return i, nil
}

// parseFileID reads DEV:INO:PATH.
func parseFileID(s string) (FileID, bool) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || parts[2] == "" {
		return FileID{}, false
	}
	dev, err1 := strconv.ParseUint(parts[0], 10, 64)
	ino, err2 := strconv.ParseUint(parts[1], 10, 64)
	return FileID{Dev: dev, Ino: ino, Path: parts[2]}, err1 == nil && err2 == nil
}

// Witness proves a term's holder gone, where something that cannot be wrong about it says so:
// on one host, the holder's processes observably ended; on Swarm, the holder's task reported
// ended by its own node once its container exited. What may still live is never proof: a
// stopped or paused process, an unreachable node, a state nobody has confirmed.
type Witness interface {
	// Gone reports whether the incarnation that holds rec (rec.Incarnation) — and every
	// process it started — is provably gone: what proves it, or "" when nothing does. recheck
	// is how soon asking again may tell otherwise, and costs no store request (zero: no sooner
	// than the contender's next read).
	Gone(ctx context.Context, rec Record) (evidence string, recheck time.Duration)
}

// WithIncarnation sets the incarnation this contender records in its terms (default: none, and
// then every process under the identity counts as one incarnation, the rule before
// incarnations: a term under the identity is taken over at once).
func WithIncarnation(i Incarnation) Option { return func(e *Election) { e.incarnation = i.String() } }

// WithWitness adds a witness that may prove a term's holder gone (a store that is a Witness —
// the Swarm store — is one already).
func WithWitness(w Witness) Option { return func(e *Election) { e.witnesses = append(e.witnesses, w) } }

// Incarnation returns the text of the incarnation this contender records.
func (e *Election) Incarnation() string { return e.incarnation }

// ownTerm reports whether rec is a term of this very incarnation: its identity and incarnation.
func (e *Election) ownTerm(rec Record) bool {
	return e.id.holds(rec) && rec.Incarnation == e.incarnation
}

// gone asks the witnesses whether rec's holder is provably gone, and remembers those that may
// tell otherwise soon without a store request (goneLater).
func (e *Election) gone(ctx context.Context, rec Record) string {
	var soon []Witness
	var every time.Duration
	for _, w := range e.witnesses {
		ev, recheck := w.Gone(ctx, rec)
		if ev != "" {
			return ev
		}
		if recheck > 0 {
			soon = append(soon, w)
			every = max(every, recheck)
		}
	}
	e.mu.Lock()
	e.rechecks = rechecks{rec: rec, witnesses: soon, every: every}
	e.mu.Unlock()
	return ""
}

// rechecks are the witnesses that may prove a record's holder gone soon, without a store
// request, and how often to ask them.
type rechecks struct {
	rec       Record
	witnesses []Witness
	every     time.Duration
}

// goneLater returns a channel closed once a witness proves rec's holder gone, asking those that
// can tell without a store request (the last gone about this very record named them) until ctx
// ends; nil when there are none.
func (e *Election) goneLater(ctx context.Context, rec Record) <-chan struct{} {
	e.mu.Lock()
	r := e.rechecks
	e.mu.Unlock()
	if len(r.witnesses) == 0 || !r.rec.Equal(rec) {
		return nil
	}
	ch := make(chan struct{})
	go func() {
		t := time.NewTicker(r.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, w := range r.witnesses {
				if ev, _ := w.Gone(ctx, rec); ev != "" {
					close(ch)
					return
				}
			}
		}
	}()
	return ch
}
