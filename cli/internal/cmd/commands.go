package cmd

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Version is the release version, set at build time with
// -ldflags "-X github.com/regbo/lfp-swarm-lease/cli/internal/cmd.Version=X.Y.Z".
var Version = "dev"

func (a *App) newInitCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the election's anchor if it does not exist (optional; idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withElection(cmd, func(ctx context.Context, s *session) error {
				snap, err := s.election.Init(ctx)
				if err != nil {
					return err
				}
				return a.printSnapshot(snap, s.store)
			})
		},
	}
}

func (a *App) newTryAcquireCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "try-acquire",
		Short: "Try once to become the holder; exit 75 if another contender holds the election",
		Long: `Try once, without waiting, to become the holder. On success print the new term's fence and
exit 0. When another contender holds a live lease, exit 75. When this identity already holds the
lease, a new term starts with a new fence.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withElection(cmd, func(ctx context.Context, s *session) error {
				res, err := s.election.TryAcquire(ctx)
				if err != nil {
					return err
				}
				cur := res.Current
				if a.json {
					out := tryAcquireJSON{
						Acquired: res.Acquired, Namespace: s.cfg.Namespace,
						CurrentHolderID: cur.HolderID, CurrentNodeID: cur.NodeID, CurrentTaskID: cur.TaskID,
						CurrentFence: cur.Fence, CurrentExpiresAt: timePtr(cur.ExpiresAt),
					}
					if res.Acquired {
						g := toRecordJSON(res.Grant.Record, res.Grant.Version)
						out.Grant = &g
					}
					if err := writeJSON(a.Out, out); err != nil {
						return err
					}
				} else if res.Acquired {
					fmt.Fprintf(a.Out, "%d\n", res.Grant.Fence)
					fmt.Fprintf(a.Err, "acquired election %q as %q: fence %d, expires %s (%s)\n",
						s.cfg.Namespace, res.Grant.HolderID, res.Grant.Fence, formatTime(res.Grant.ExpiresAt), s.store.Describe())
				} else {
					fmt.Fprintf(a.Err, "election %q is held by %q (node %s, task %s) with fence %d until %s (%s)\n",
						s.cfg.Namespace, cur.HolderID, dash(cur.NodeID), dash(cur.TaskID), cur.Fence, formatTime(cur.ExpiresAt), s.store.Describe())
				}
				if !res.Acquired {
					return &exitError{code: ExitHeld, err: errSilent}
				}
				return nil
			})
		},
	}
}

func (a *App) newRenewCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "renew FENCE",
		Short: "Extend the lease held with FENCE; exit 3 if this identity does not hold it",
		RunE: func(cmd *cobra.Command, args []string) error {
			fence, err := fenceArg(args)
			if err != nil {
				return err
			}
			return a.withElection(cmd, func(ctx context.Context, s *session) error {
				g, err := s.election.Renew(ctx, fence)
				if err != nil {
					return err
				}
				if a.json {
					return writeJSON(a.Out, toRecordJSON(g.Record, g.Version))
				}
				fmt.Fprintf(a.Out, "%d\n", g.Fence)
				fmt.Fprintf(a.Err, "renewed election %q: fence %d, expires %s (%s)\n", s.cfg.Namespace, g.Fence, formatTime(g.ExpiresAt), s.store.Describe())
				return nil
			})
		},
	}
}

func (a *App) newReleaseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "release FENCE",
		Short: "Give up the lease held with FENCE; exit 3 if this identity does not hold it",
		RunE: func(cmd *cobra.Command, args []string) error {
			fence, err := fenceArg(args)
			if err != nil {
				return err
			}
			return a.withElection(cmd, func(ctx context.Context, s *session) error {
				if err := s.election.Release(ctx, fence); err != nil {
					return err
				}
				if a.json {
					return writeJSON(a.Out, map[string]any{"released": true, "namespace": s.cfg.Namespace, "fence": fence})
				}
				fmt.Fprintf(a.Err, "released election %q (fence %d, %s)\n", s.cfg.Namespace, fence, s.store.Describe())
				return nil
			})
		},
	}
}

func (a *App) newInspectCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "inspect",
		Short: "Show the election: holder, node, task, fence, expiry",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withElection(cmd, func(ctx context.Context, s *session) error {
				snap, err := s.election.Inspect(ctx)
				if err != nil {
					return err
				}
				return a.printSnapshot(snap, s.store)
			})
		},
	}
}

func (a *App) newDestroyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "destroy",
		Short: "Remove the election (the Swarm anchor service); a holder loses its lease",
		Long: `Remove the election: the anchor service on Swarm, the election's file on the file store.
A current holder's next renewal fails. A later acquisition re-creates the election with a fence
counter that starts at the current time in microseconds, above every fence issued before.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withElection(cmd, func(ctx context.Context, s *session) error {
				if err := s.election.Destroy(ctx); err != nil {
					return err
				}
				if a.json {
					return writeJSON(a.Out, map[string]any{"destroyed": true, "namespace": s.cfg.Namespace})
				}
				fmt.Fprintf(a.Err, "destroyed election %q (%s)\n", s.cfg.Namespace, s.store.Describe())
				return nil
			})
		},
	}
}

func (a *App) newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := Version
			if info, ok := debug.ReadBuildInfo(); ok && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
				v = info.Main.Version
			}
			if a.json {
				return writeJSON(a.Out, map[string]string{"version": v, "go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
			}
			fmt.Fprintf(a.Out, "lfp-swarm-lease %s (%s, %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

func (a *App) printSnapshot(snap lease.Snapshot, store lease.Store) error {
	if a.json {
		return writeJSON(a.Out, snapshotJSON{recordJSON: toRecordJSON(snap.Record, snap.Version), Exists: snap.Exists, Acquired: snap.Acquired, Store: store.Describe()})
	}
	describeSnapshot(a.Out, snap, store.Describe())
	return nil
}
