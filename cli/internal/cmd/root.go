// Package cmd implements the lfp-swarm-lease command line.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd/electionscmd"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd/oneshot"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd/runcmd"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd/servecmd"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd/version"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd/watchcmd"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/images/buildinfo"
)

// App is the root command: it wires the commands to one Factory (streams, environment, clock,
// the persistent flags) and maps their errors to exit codes.
type App struct {
	*cmdutil.Factory
}

// stderrFlush bounds how long the exit waits for stderr to take the last log lines.
const stderrFlush = 2 * time.Second

// Execute runs the command line with the process's arguments and returns the exit code.
func Execute() int {
	// No write to stderr waits for its reader: run must stop its command on time whatever the
	// reader does (cmdutil.LogQueue). Stdout carries data and stays a plain stream.
	stderr := cmdutil.NewLogQueue(os.Stderr)
	defer stderr.Close(stderrFlush)
	app := &App{&cmdutil.Factory{
		IOStreams: cmdutil.IOStreams{Out: os.Stdout, Err: stderr}, Environ: os.Environ,
		Hostname: func() string {
			if h := os.Getenv("HOSTNAME"); h != "" {
				return h
			}
			h, _ := os.Hostname()
			return h
		},
	}}
	// A reader of stderr (or stdout) that went away must not kill run before it releases the
	// lease: with SIGPIPE handled, such writes fail with EPIPE, and log writes ignore errors.
	// Handled rather than ignored, so that nothing of it is inherited by the child.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Run(ctx, os.Args[1:])
}

// Run executes args and returns the exit code.
func (a *App) Run(ctx context.Context, args []string) int {
	root := a.newRootCmd()
	root.SetArgs(args)
	root.SetOut(a.Out)
	root.SetErr(a.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	code, name := cmdutil.Classify(err)
	var exit *cmdutil.ExitError
	if errors.As(err, &exit) && exit.Err == cmdutil.ErrSilent {
		return code
	}
	if code == cmdutil.ExitFailure && isCobraUsage(err) {
		code, name = cmdutil.ExitUsage, "usage"
	}
	err = cmdutil.DescribeStoreFault(err, code)
	fmt.Fprintf(a.Err, "lfp-swarm-lease: %v\n", err)
	if a.JSON {
		_ = cmdutil.WriteJSON(a.Out, cmdutil.ErrorJSON{Error: err.Error(), Code: name, Exit: code})
	}
	return code
}

func (a *App) newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "lfp-swarm-lease",
		Short: "Leader election for Docker Swarm services, with fencing tokens",
		Long: `lfp-swarm-lease elects exactly one leader among the replicas of a Docker Swarm service. The
election lives in labels on a zero-replica "anchor" service, updated by compare-and-swap on the
service's version index: Swarm's own Raft log is the database.

Settings come from flags, then environment variables (SWARM_LEASE_*, or the prefix chosen with
--env-prefix; each also as *_FILE naming a regular file of at most 64 KiB), then labels of
the current Swarm task's container, then defaults.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Get().Version,
	}
	root.SetVersionTemplate(buildinfo.Get().Line("lfp-swarm-lease") + "\n")
	pf := root.PersistentFlags()
	pf.StringVar(&a.EnvPrefix, "env-prefix", config.DefaultEnvPrefix, "prefix of every environment variable")
	pf.BoolVar(&a.JSON, "json", false, "print one JSON object instead of text")
	pf.DurationVar(&a.Timeout, "timeout", time.Minute, "give up an operation after this long (a Swarm write can block 20 s while the Raft leader changes)")
	config.RegisterFlags(pf, config.KeyNamespace, config.KeyHolderID, config.KeyNodeID, config.KeyTaskID,
		config.KeyStore, config.KeyEtcdCAFile, config.KeyEtcdCertFile, config.KeyEtcdKeyFile, config.KeyEtcdUsername,
		config.KeyEtcdDialTimeoutMs, config.KeyEtcdRequestTimeoutMs,
		config.KeyTTLMillis, config.KeyMaxCASRetries, config.KeyMaxClockSkewMs)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		// A secret's would-be flag (--etcd-password) is told where the secret goes instead.
		if secret := config.SecretFlag(a.EnvPrefix, err); secret != nil {
			return cmdutil.Usage(secret)
		}
		return cmdutil.Usage(err)
	})

	root.AddCommand(
		oneshot.NewCmdInit(a.Factory, nil),
		oneshot.NewCmdTryAcquire(a.Factory, nil),
		oneshot.NewCmdRenew(a.Factory, nil),
		oneshot.NewCmdRelease(a.Factory, nil),
		oneshot.NewCmdInspect(a.Factory, nil),
		oneshot.NewCmdDestroy(a.Factory, nil),
		version.NewCmdVersion(a.Factory, nil),
		runcmd.NewCmdRun(a.Factory, nil),
		runcmd.NewCmdGuard(),
		servecmd.NewCmdServe(a.Factory, nil),
		servecmd.NewCmdOpenAPI(a.Factory),
		watchcmd.NewCmdWatch(a.Factory, nil),
		electionscmd.NewCmdElections(a.Factory, nil),
	)
	return root
}

func isCobraUsage(err error) bool {
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand"} {
		if strings.HasPrefix(err.Error(), prefix) {
			return true
		}
	}
	return false
}
