package oneshot

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// Options are what every one-shot command works with.
type Options struct {
	// IO receives data on Out (the fence, or JSON) and status on Err.
	IO cmdutil.IOStreams
	// JSON prints one JSON object instead of text.
	JSON bool
	// Timeout bounds the store operations (--timeout).
	Timeout time.Duration
	// Now is the wall clock.
	Now func() time.Time
	// Open opens the election the command acts on; the caller closes the session.
	Open func() (*cmdutil.Session, error)
}

// observerHolderID stands in for the holder ID of commands that never hold the lease (inspect,
// init, destroy): the election needs an identity to open, and theirs is never written.
const observerHolderID = "observer"

// newOptions fills the options from the factory when the command runs; readOnly commands need
// no holder identity. extra are options of the election (try-acquire's incarnation).
func newOptions(f *cmdutil.Factory, cmd *cobra.Command, readOnly bool, extra ...lease.Option) Options {
	return Options{
		IO: f.IOStreams, JSON: f.JSON, Timeout: f.Timeout, Now: f.Clock(),
		Open: func() (*cmdutil.Session, error) {
			cfg, err := f.LoadConfig(cmd, config.Loader{NoHolderID: readOnly, Hostname: f.Hostname})
			if err != nil {
				return nil, err
			}
			if cfg.Store == config.StoreMemory {
				return nil, cmdutil.Usage(fmt.Errorf("invalid %s memory (from %s) for %s: the memory store lives only as long as one process, so every command would hold an election of its own; use file:///absolute/dir (one host), swarm or etcd://HOST:PORT",
					config.KeyStore, cfg.Source(config.KeyStore), cmd.Name()))
			}
			if readOnly && cfg.Identity.HolderID == "" {
				cfg.Identity.HolderID = observerHolderID
			}
			return cmdutil.OpenElection(cfg, extra...)
		},
	}
}

// addFlags gives cmd, a one-shot command, its flags: the store's and the election's settings
// (the identity's too for the read-only commands, which do not need it but take it, as scripts
// give every command the same flags), --env-prefix, --json and --timeout; and its page of the
// docs.
func addFlags(f *cmdutil.Factory, cmd *cobra.Command) *cobra.Command {
	config.RegisterFlags(cmd.Flags(), append(config.ElectionKeys, config.StoreKeys...)...)
	f.AddEnvPrefixFlag(cmd.Flags())
	f.AddJSONFlag(cmd.Flags())
	f.AddTimeoutFlag(cmd.Flags())
	cmd.Annotations = map[string]string{cmdutil.DocsAnnotation: "docs/commands.md"}
	return cmd
}

// withRunE gives cmd, a command acting on the election, its RunE: the options filled from f
// when it runs, then runF when a test passed one, else run.
func withRunE(f *cmdutil.Factory, cmd *cobra.Command, readOnly bool, runF, run func(context.Context, *Options) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		opts := newOptions(f, cmd, readOnly)
		if runF != nil {
			return runF(cmd.Context(), &opts)
		}
		return run(cmd.Context(), &opts)
	}
	return addFlags(f, cmd)
}

// withFenceRunE is withRunE for the commands that take the FENCE argument (renew, release).
func withFenceRunE(f *cmdutil.Factory, cmd *cobra.Command, runF, run func(context.Context, *FenceOptions) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		fence, err := parseFence(args)
		if err != nil {
			return err
		}
		opts := FenceOptions{Options: newOptions(f, cmd, false), Fence: fence}
		if runF != nil {
			return runF(cmd.Context(), &opts)
		}
		return run(cmd.Context(), &opts)
	}
	return addFlags(f, cmd)
}

// withSession opens the election, runs fn with the timeout bound on ctx, and closes the store.
func (o *Options) withSession(ctx context.Context, fn func(ctx context.Context, s *cmdutil.Session) error) error {
	s, err := o.Open()
	if err != nil {
		return err
	}
	defer s.Close()
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	return s.Unreachable(fn(ctx, s))
}

// parseFence parses the FENCE argument.
func parseFence(args []string) (uint64, error) {
	if len(args) != 1 {
		return 0, cmdutil.Usage(fmt.Errorf("want one argument, the fence, got %d: pass the fence that try-acquire printed (renew FENCE, release FENCE)", len(args)))
	}
	f, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil || f == 0 {
		return 0, cmdutil.Usage(fmt.Errorf("invalid fence %q: want a positive whole number, as printed by try-acquire", args[0]))
	}
	return f, nil
}
