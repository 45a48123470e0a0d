package cmd

import (
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"

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
			return a.withElection(cmd, func(ctx context.Context, s *cmdutil.Session) error {
				snap, err := s.Election.Init(ctx)
				if err != nil {
					return err
				}
				return a.printSnapshot(snap, s.Store)
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
			return a.withElection(cmd, func(ctx context.Context, s *cmdutil.Session) error {
				res, err := s.Election.TryAcquire(ctx)
				if err != nil {
					return err
				}
				cur := res.Current
				if a.JSON {
					out := cmdutil.TryAcquireJSON{
						Acquired: res.Acquired, Namespace: s.Config.Namespace,
						CurrentHolderID: cur.HolderID, CurrentNodeID: cur.NodeID, CurrentTaskID: cur.TaskID,
						CurrentFence: cur.Fence, CurrentExpiresAt: cmdutil.TimePtr(cur.ExpiresAt),
					}
					if res.Acquired {
						g := cmdutil.ToRecordJSON(res.Grant.Record, res.Grant.Version)
						out.Grant = &g
					}
					if err := cmdutil.WriteJSON(a.Out, out); err != nil {
						return err
					}
				} else if res.Acquired {
					fmt.Fprintf(a.Out, "%d\n", res.Grant.Fence)
					fmt.Fprintf(a.Err, "acquired election %q as %q: fence %d, expires %s (%s)\n",
						s.Config.Namespace, res.Grant.HolderID, res.Grant.Fence, cmdutil.FormatTime(res.Grant.ExpiresAt), s.Store.Describe())
				} else {
					fmt.Fprintf(a.Err, "election %q is held by %q (node %s, task %s) with fence %d until %s (%s)\n",
						s.Config.Namespace, cur.HolderID, cmdutil.Dash(cur.NodeID), cmdutil.Dash(cur.TaskID), cur.Fence, cmdutil.FormatTime(cur.ExpiresAt), s.Store.Describe())
				}
				if !res.Acquired {
					return &cmdutil.ExitError{Code: cmdutil.ExitHeld, Err: cmdutil.ErrSilent}
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
			return a.withElection(cmd, func(ctx context.Context, s *cmdutil.Session) error {
				g, err := s.Election.Renew(ctx, fence)
				if err != nil {
					return err
				}
				if a.JSON {
					return cmdutil.WriteJSON(a.Out, cmdutil.ToRecordJSON(g.Record, g.Version))
				}
				fmt.Fprintf(a.Out, "%d\n", g.Fence)
				fmt.Fprintf(a.Err, "renewed election %q: fence %d, expires %s (%s)\n", s.Config.Namespace, g.Fence, cmdutil.FormatTime(g.ExpiresAt), s.Store.Describe())
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
			return a.withElection(cmd, func(ctx context.Context, s *cmdutil.Session) error {
				if err := s.Election.Release(ctx, fence); err != nil {
					return err
				}
				if a.JSON {
					return cmdutil.WriteJSON(a.Out, map[string]any{"released": true, "namespace": s.Config.Namespace, "fence": fence})
				}
				fmt.Fprintf(a.Err, "released election %q (fence %d, %s)\n", s.Config.Namespace, fence, s.Store.Describe())
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
			return a.withElection(cmd, func(ctx context.Context, s *cmdutil.Session) error {
				snap, err := s.Election.Inspect(ctx)
				if err != nil {
					return err
				}
				return a.printSnapshot(snap, s.Store)
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
			return a.withElection(cmd, func(ctx context.Context, s *cmdutil.Session) error {
				if err := s.Election.Destroy(ctx); err != nil {
					return err
				}
				if a.JSON {
					return cmdutil.WriteJSON(a.Out, map[string]any{"destroyed": true, "namespace": s.Config.Namespace})
				}
				fmt.Fprintf(a.Err, "destroyed election %q (%s)\n", s.Config.Namespace, s.Store.Describe())
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
			if a.JSON {
				return cmdutil.WriteJSON(a.Out, map[string]string{"version": v, "go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
			}
			fmt.Fprintf(a.Out, "lfp-swarm-lease %s (%s, %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

func (a *App) printSnapshot(snap lease.Snapshot, store lease.Store) error {
	if a.JSON {
		return cmdutil.WriteJSON(a.Out, cmdutil.SnapshotJSON{RecordJSON: cmdutil.ToRecordJSON(snap.Record, snap.Version), Exists: snap.Exists, Acquired: snap.Acquired, Store: store.Describe()})
	}
	cmdutil.DescribeSnapshot(a.Out, snap, store.Describe())
	return nil
}
