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
	var exit *cmdutil.ExitError
	if errors.As(err, &exit) && exit.Err == cmdutil.ErrSilent {
		return exit.Code
	}
	return cmdutil.Report(a.IOStreams, a.JSON, unknownCommand(root, err))
}

func (a *App) newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "lfp-swarm-lease",
		Short: "Leader election for Docker Swarm services, with fencing tokens",
		Long: `Leader election with fencing tokens: run a command on exactly one replica of a service (run),
serve an elections API for processes without Docker access (serve), or watch who leads (watch).
The election lives in Swarm (labels on a zero-replica anchor service), in etcd, or in a file
store on one host. Settings come from flags, then SWARM_LEASE_* variables (each also as *_FILE),
then the Swarm task's container labels, then defaults.`,
		Example: `  lfp-swarm-lease run --store file:.lease --namespace demo --listen off -- ./reconcile
  lfp-swarm-lease serve --listen 127.0.0.1:8080
  lfp-swarm-lease watch http://127.0.0.1:8080`,
		Annotations:   map[string]string{cmdutil.DocsAnnotation: "README.md"},
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Get().Version,
	}
	root.SetVersionTemplate(buildinfo.Get().Line("lfp-swarm-lease") + "\n")
	root.SetHelpFunc(cmdutil.Help)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		// A secret's would-be flag (--etcd-password) is told where the secret goes instead.
		if secret := config.SecretFlag(a.EnvPrefix, err); secret != nil {
			return cmdutil.Usage(secret)
		}
		return cmdutil.FlagError(cmd, err)
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
	// Shell completion, with an example in every command's help as the others have.
	root.InitDefaultCompletionCmd()
	if completion, _, err := root.Find([]string{"completion"}); err == nil && completion != root {
		completion.Example = "  source <(lfp-swarm-lease completion bash)"
		completion.Annotations = map[string]string{cmdutil.DocsAnnotation: "docs/commands.md"}
		for _, shell := range completion.Commands() {
			shell.Example = "  lfp-swarm-lease completion " + shell.Name() + " > lfp-swarm-lease.completion"
		}
	}
	return root
}

// unknownCommand restates cobra's "unknown command" (a misspelt command, or an argument a
// command takes none of) as one line that says what to do, with cobra's suggestion; it is a
// usage error. Other errors pass unchanged.
func unknownCommand(root *cobra.Command, err error) error {
	first, _, _ := strings.Cut(err.Error(), "\n")
	var arg, path string
	if n, _ := fmt.Sscanf(first, "unknown command %q for %q", &arg, &path); n != 2 {
		return err
	}
	fix := path + " --help lists what it takes"
	if s := root.SuggestionsFor(arg); len(s) > 0 && path == root.Name() {
		fix = "did you mean " + strings.Join(s, " or ") + "? (" + fix + ")"
	}
	return cmdutil.Usage(fmt.Errorf("%s: %s", first, fix))
}
