package runcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/cli/internal/incarnation"
	"github.com/regbo/lfp-swarm-lease/cli/internal/runloop"
	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// Options are run's: its streams and environment, the command to supervise, and how run ends.
type Options struct {
	// IO: run logs on Err; the command shares both streams with run's own process.
	IO cmdutil.IOStreams
	// Environ is the environment the command inherits.
	Environ []string
	// Argv is the command and its arguments.
	Argv []string
	// Once exits after the first term; ExitOnChildExit when the command exits by itself.
	Once, ExitOnChildExit bool
	// Config loads the configuration.
	Config func() (*config.Config, error)
	// Log is --log-format and --log-level.
	Log cmdutil.LogOptions
}

// NewCmdRun is `run`; runF, when set, replaces runRun (tests of parsing).
func NewCmdRun(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Contend forever and run CMD only while this replica leads",
		Long: `Contend for the election and run CMD only while this replica holds the lease; stop CMD before the
term can end, and on SIGTERM stop it and release. PREFIX_FENCE tells CMD its term's fence.`,
		Example: `  lfp-swarm-lease run -- ./reconcile
  lfp-swarm-lease run --store file:.lease --namespace nightly --listen off --once -- ./report`,
		Annotations: map[string]string{cmdutil.DocsAnnotation: "docs/run.md"},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.Usage(errors.New("run needs a command: lfp-swarm-lease run -- CMD [ARGS...]"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO, opts.Environ, opts.Argv = f.IOStreams, f.Environ(), args
			opts.Config = func() (*config.Config, error) {
				// With a server, run contends through the elections API: no Docker access.
				// Outside a Swarm task the holder is this host (in a room: the hostname made a
				// valid candidate id).
				return f.LoadConfig(cmd, config.Loader{Remote: true, Hostname: f.Hostname})
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Once, "once", false, "exit after the first leadership term")
	cmd.Flags().BoolVar(&opts.ExitOnChildExit, "exit-on-child-exit", false, "exit with CMD's code when it exits by itself, instead of contending again")
	config.RegisterFlags(cmd.Flags(), append([]string{config.KeyServer, config.KeyElectionID, config.KeyListen, config.KeyRenewIntervalMs,
		config.KeyShutdownTimeoutMs, config.KeyDefaultPollMillis, config.KeyKeepAliveMillis, config.KeyChildCgroup, config.KeyCORSAllowedOrigins},
		append(config.ElectionKeys, config.StoreKeys...)...)...)
	cmdutil.AddLogFlags(cmd.Flags(), &opts.Log, "info")
	f.AddEnvPrefixFlag(cmd.Flags())
	f.AddJSONFlag(cmd.Flags())
	return cmd
}

// runRun checks the configuration and the command, then contends in the mode the configuration
// names: one loop (contend) over the engine of that mode.
func runRun(ctx context.Context, opts *Options) error {
	log, err := opts.Log.Logger(opts.IO.Err)
	if err != nil {
		return err
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	if err := checkModeFlags(cfg); err != nil {
		return err
	}
	// A command that can never start is a configuration error, not a reason to take term after
	// term.
	if err := checkCommand(opts.Argv[0]); err != nil {
		return err
	}
	if cfg.Server != "" {
		return roomRun(ctx, opts, cfg, log)
	}
	metrics := server.NewMetrics()
	cmdutil.RegisterLogDrops(metrics.Registry(), opts.IO.Err)
	inc := newIncarnation(cfg, log)
	defer inc.Close()
	s, err := cmdutil.OpenElection(cfg, lease.WithRecorder(metrics), lease.WithIncarnation(inc.Incarnation))
	if err != nil {
		return err
	}
	defer s.Close()
	return leaseRun(ctx, opts, s, inc, metrics, log)
}

// leaseRun is run on the Swarm lease, etcd or the file store: a lease.Contender wins the terms,
// and the HTTP API serves what the contender reads.
func leaseRun(ctx context.Context, opts *Options, s *cmdutil.Session, inc *incarnation.Run, metrics *server.Metrics, log *slog.Logger) error {
	cfg := s.Config
	contender, err := lease.NewContender(lease.Contender{
		Election:      s.Election,
		RenewInterval: cfg.RenewInterval,
		PollInterval:  cfg.DefaultPoll,
		StopBefore:    cfg.ShutdownTimeout,
		Logger:        log,
	})
	if err != nil {
		return timingSettingError(cfg, err)
	}
	leaders := &leaderLog{log: log, self: cfg.Identity}
	contender.OnState = leaders.onState
	if cfg.Listen != config.ListenOff {
		ln, err := cmdutil.Listen(cfg, true)
		if err != nil {
			return err
		}
		// The API serves what the contender reads: one reader of the store per replica.
		snaps := make(chan lease.Snapshot, 1)
		contender.OnState = func(s lease.Snapshot) { leaders.onState(s); lease.ReplaceNewest(snaps, s) }
		// The HTTP API lives as long as run: stopped after the contender has released.
		httpCtx, stopHTTP := context.WithCancel(context.WithoutCancel(ctx))
		served := make(chan error, 1)
		go func() { served <- cmdutil.ServeElection(httpCtx, s, metrics, log, ln, snaps) }()
		defer func() {
			close(snaps) // the contender has returned: nothing observes any more
			stopHTTP()
			<-served
		}()
	}
	log.Info("contending", "namespace", cfg.Namespace, "store", s.Store.Describe(), "incarnation", inc.Incarnation.ID)
	return contend(ctx, opts, cfg, leaseEngine{contender}, inc, log)
}

// contend is run's one loop: it contends until ctx ends or the command's outcome says run
// exits, leading every term won with the supervision loop; a command that keeps crashing makes
// it stop contending for the back-off, the term released meanwhile. inc, when set, is run's
// incarnation, whose lock every guard and command inherits.
func contend(ctx context.Context, opts *Options, cfg *config.Config, c engine, inc *incarnation.Run, log *slog.Logger) error {
	loop := &runloop.Loop{Argv: opts.Argv, Environ: withoutSecrets(opts.Environ, cfg.EnvPrefix), Grace: cfg.ShutdownTimeout, NoCgroup: !cfg.ChildCgroup,
		Once: opts.Once, ExitOnChildExit: opts.ExitOnChildExit, Log: log}
	if inc != nil {
		loop.Hold = inc.Lock
	}
	loop.Prepare() // the guard of the first term, started while following
	defer loop.Close()
	for {
		var last runloop.Outcome
		err := c.Contend(ctx, func(t wonTerm) error {
			if inc != nil {
				inc.Lead()
			}
			out, err := loop.Lead(ctx, t.forLoop(cfg.EnvPrefix, log))
			if err != nil {
				return commandError(err)
			}
			if out.Exit || out.Backoff > 0 {
				last = out
				return errStopContending
			}
			return nil
		})
		switch {
		case errors.Is(err, errStopContending) && last.Exit:
			return exitWithOutcome(last)
		case errors.Is(err, errStopContending):
			// Released: another replica may take over while this one waits.
			if timing.Sleep(ctx, last.Backoff) == nil {
				continue
			}
		case err != nil:
			return err
		}
		log.Info("stopped")
		return nil
	}
}

// withoutSecrets is environ without the variables of run's secret settings (the store's
// password): the command inherits run's environment, but not its credentials. When there are
// some, run also makes itself unreadable to its own user (not dumpable): the command, running as
// that user, could otherwise read them from /proc/<run's pid>/environ.
func withoutSecrets(environ []string, prefix string) []string {
	secret := config.SecretVariables(prefix)
	kept := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(secret, name)
	})
	if len(kept) < len(environ) {
		hideFromOwnUser()
	}
	return kept
}

// exitWithOutcome is run's result when the loop decided to exit: the command's own code, or
// runloop.ExitLost.
func exitWithOutcome(out runloop.Outcome) error {
	if out.ExitCode != 0 {
		return &cmdutil.ExitError{Code: out.ExitCode, Err: fmt.Errorf("run: exiting with the child's outcome (%d)", out.ExitCode)}
	}
	return nil
}

// NewCmdGuard is the hidden command that runs the guard between run and its command.
func NewCmdGuard() *cobra.Command {
	var graceMs int64
	var parent, reportFD, termFD, holdFD int
	var noCgroup bool
	cmd := &cobra.Command{
		Use:    supervisor.GuardCommand + " -- CMD [ARGS...]",
		Short:  "Internal: the process that keeps run's child and all it starts from outliving run",
		Hidden: true,
		RunE: func(_ *cobra.Command, args []string) error {
			opts := supervisor.GuardOptions{Argv: args, Grace: time.Duration(graceMs) * time.Millisecond, Parent: parent, Cgroup: !noCgroup}
			if reportFD > 0 {
				report := supervisor.OpenReport(reportFD)
				defer report.Close()
				opts.Report = report
			}
			if holdFD > 0 {
				opts.Hold = supervisor.OpenHold(holdFD)
			}
			if termFD > 0 {
				term := supervisor.OpenTerm(termFD)
				defer term.Close()
				opts.Term = term
			}
			code := supervisor.Guard(opts)
			if code != 0 {
				return &cmdutil.ExitError{Code: code, Err: cmdutil.ErrSilent}
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&graceMs, "grace-ms", 10000, "SIGTERM → SIGKILL grace")
	cmd.Flags().IntVar(&parent, "parent", 0, "the supervisor's PID")
	cmd.Flags().IntVar(&reportFD, "report-fd", 0, "file descriptor to write the guard's reports to")
	cmd.Flags().BoolVar(&noCgroup, "no-cgroup", false, "do not put the command in a cgroup of its own")
	cmd.Flags().IntVar(&termFD, "term-fd", 0, "wait idle for the term on this file descriptor before starting the command")
	cmd.Flags().IntVar(&holdFD, "hold-fd", 0, "the incarnation's lock: hold it, and pass it on to the command")
	return cmd
}
