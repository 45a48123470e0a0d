package runcmd

import (
	"log/slog"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// leaderLog logs, on a follower, who leads whenever that changes: the holder and fence the
// contender read, whatever the engine. Routine renewals of the same term log nothing.
type leaderLog struct {
	log  *slog.Logger
	self lease.Identity

	mu           sync.Mutex // the contender reports states from its renewal goroutine too
	holder, task string
	fence        uint64
}

// onState is a lease.Contender.OnState function.
func (l *leaderLog) onState(s lease.Snapshot) {
	if !s.Acquired {
		l.observe(wonTerm{Namespace: s.Namespace}, time.Time{})
		return
	}
	l.observe(wonTerm{Namespace: s.Namespace, Fence: s.Fence, Holder: lease.Identity{HolderID: s.HolderID, TaskID: s.TaskID}}, s.ExpiresAt)
}

// onLeader receives the leader a room's contender follows.
func (l *leaderLog) onLeader(t wonTerm) { l.observe(t, time.Time{}) }

// observe logs t's holder (none: no leader) if it differs from the last one seen.
func (l *leaderLog) observe(t wonTerm, expiresAt time.Time) {
	holder, task, fence := t.Holder.HolderID, t.Holder.TaskID, t.Fence
	l.mu.Lock()
	defer l.mu.Unlock()
	if holder == l.holder && task == l.task && fence == l.fence {
		return
	}
	l.holder, l.task, l.fence = holder, task, fence
	switch {
	case holder == "":
		l.log.Info("following: no leader", "namespace", t.Namespace)
	case holder == l.self.HolderID && task == l.self.TaskID:
		// This replica's own term: its own lines say so.
	default:
		attrs := []any{"namespace", t.Namespace, "leader_holder_id", holder, "leader_task_id", task, "leader_fence", fence}
		if !expiresAt.IsZero() {
			attrs = append(attrs, "expires_at", expiresAt)
		}
		l.log.Info("following", attrs...)
	}
}
