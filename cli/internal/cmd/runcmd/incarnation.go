package runcmd

import (
	"fmt"
	"log/slog"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/cli/internal/incarnation"
)

// newIncarnation is run's incarnation (incarnation.ForRun): its lock, in a directory of the
// election's (its store and namespace), and — when run is the init process of its Swarm task's
// container, a task Swarm reports running, in a container that ran no run before and can tell
// (its lock: a container started again outside Swarm has an ended task, and an earlier run's
// lock) — that container, whose end Swarm reports.
func newIncarnation(cfg *config.Config, log *slog.Logger) *incarnation.Run {
	key := fmt.Sprint(cfg.Store, "\x00", cfg.StoreDir, "\x00", cfg.Etcd.Endpoints, "\x00", cfg.Etcd.Prefix, "\x00", cfg.Namespace)
	r, err := incarnation.ForRun("", key)
	if err != nil {
		log.Warn("no incarnation lock", "err", err)
	}
	if t := cfg.Task; t != nil && r.Lock != nil && t.TaskID == cfg.Identity.TaskID && !t.Ended && !r.Earlier && incarnation.InitOf(t.Container) {
		r.Incarnation.Container = t.Container
	}
	return r
}
