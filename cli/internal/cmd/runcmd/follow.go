package runcmd

import (
	"log/slog"
	"sync"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// leaderLog logs, on a follower, who leads whenever that changes: the holder and fence the
// campaign read. Routine renewals of the same term log nothing.
type leaderLog struct {
	log  *slog.Logger
	self lease.Identity

	mu           sync.Mutex // the campaign reports states from its renewal goroutine too
	holder, task string
	fence        uint64
}

// onState is a Campaign.OnState function.
func (l *leaderLog) onState(s lease.Snapshot) {
	holder, task, fence := "", "", uint64(0)
	if s.Acquired {
		holder, task, fence = s.HolderID, s.TaskID, s.Fence
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if holder == l.holder && task == l.task && fence == l.fence {
		return
	}
	l.holder, l.task, l.fence = holder, task, fence
	switch {
	case holder == "":
		l.log.Info("following: no leader", "namespace", s.Namespace)
	case holder == l.self.HolderID && task == l.self.TaskID:
		// This replica's own term: its own lines say so.
	default:
		l.log.Info("following", "namespace", s.Namespace, "leader_holder_id", holder, "leader_task_id", task, "leader_fence", fence,
			"expires_at", s.ExpiresAt)
	}
}
