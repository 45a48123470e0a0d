package runcmd

import (
	"log/slog"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/cli/internal/incarnation"
)

// newIncarnation is run's incarnation (incarnation.ForRun): its lock, and — when run is the
// init process of its Swarm task's container, a task Swarm reports running, in a container that
// ran no run before (a container started again outside Swarm has an ended task) — that
// container, whose end Swarm reports.
func newIncarnation(cfg *config.Config, log *slog.Logger) *incarnation.Run {
	r, err := incarnation.ForRun("")
	if err != nil {
		log.Warn("no incarnation lock", "err", err)
	}
	if t := cfg.Task; t != nil && t.TaskID == cfg.Identity.TaskID && !t.Ended && !r.Earlier && incarnation.InitOf(t.Container) {
		r.Incarnation.Container = t.Container
	}
	return r
}
