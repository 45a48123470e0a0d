// Package electionscmd holds the operators' rooms commands against an elections server:
// `elections create`, `elections status ID` and `elections watch ID`. Campaigning stays
// `run --server`, which supervises the leader's work.
package electionscmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd/watchcmd"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// Options are what the rooms commands share.
type Options struct {
	// IO receives data on Out and status on Err.
	IO cmdutil.IOStreams
	// JSON prints one JSON object.
	JSON bool
	// Server is the elections server's base URL (--server or <PREFIX>_SERVER).
	Server string
	// Timeout bounds each request (--timeout).
	Timeout time.Duration
	// Room is the room id (status, watch).
	Room string
	// Log is --log-format and --log-level of watch (default warn: reconnects only).
	Log cmdutil.LogOptions
}

// NewCmdElections is the `elections` family; runF, when set, replaces the run function of each
// subcommand (tests of parsing), with the subcommand's name.
func NewCmdElections(f *cmdutil.Factory, runF func(ctx context.Context, name string, opts *Options) error) *cobra.Command {
	parent := &cobra.Command{
		Use:   "elections",
		Short: "Create, inspect and watch rooms of an elections server",
		Long: `Operators' commands against an elections server (serve, or any with the same contract), named
with --server URL. Campaigning in a room is run --server URL --election ID, which runs the work.`,
		Example: `  ROOM=$(lfp-swarm-lease elections create --server http://elect:8080)
  lfp-swarm-lease elections status "$ROOM" --server http://elect:8080 --json
  lfp-swarm-lease elections watch "$ROOM" --server http://elect:8080`,
	}
	parent.Annotations = map[string]string{cmdutil.DocsAnnotation: "docs/http-api.md"}
	config.RegisterFlags(parent.PersistentFlags(), config.KeyServer)
	var log cmdutil.LogOptions // watch's flags
	sub := func(use, short, example string, args cobra.PositionalArgs, run func(context.Context, *Options) error) *cobra.Command {
		cmd := &cobra.Command{
			Use: use, Short: short, Example: example, Args: args,
			RunE: func(cmd *cobra.Command, args []string) error {
				cfg, err := f.LoadConfig(cmd, config.Loader{Remote: true, NoHolderID: true, NamespaceOptional: true})
				if err != nil {
					return err
				}
				if cfg.Server == "" {
					return cmdutil.Usage(fmt.Errorf("no elections server: set --%s URL or %s", config.FlagName(config.KeyServer), config.EnvName(cfg.EnvPrefix, config.KeyServer)))
				}
				opts := &Options{IO: f.IOStreams, JSON: f.JSON, Server: cfg.Server, Timeout: f.Timeout, Log: log}
				if len(args) == 1 {
					opts.Room = args[0]
				}
				if runF != nil {
					return runF(cmd.Context(), cmd.Name(), opts)
				}
				return run(cmd.Context(), opts)
			},
		}
		f.AddEnvPrefixFlag(cmd.Flags())
		f.AddJSONFlag(cmd.Flags())
		return cmd
	}
	roomArg := func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return cmdutil.Usage(errors.New("want one argument, the room id: pass the id that elections create printed"))
		}
		return nil
	}
	watch := sub("watch ID", "Print a room's state, then every change", "  lfp-swarm-lease elections watch nightly-report --server http://elect:8080 --json", roomArg, watchRun)
	// Long-running like watch URL: its reconnects are logged, so it takes the same log flags.
	cmdutil.AddLogFlags(watch.Flags(), &log, "warn")
	create := sub("create", "Create a room and print its id", "  lfp-swarm-lease elections create --server http://elect:8080", cobra.NoArgs, createRun)
	status := sub("status ID", "Show a room's leader and term, or that it is vacant", "  lfp-swarm-lease elections status nightly-report --server http://elect:8080", roomArg, statusRun)
	for _, c := range []*cobra.Command{create, status} {
		f.AddTimeoutFlag(c.Flags())
	}
	parent.AddCommand(create, status, watch)
	return parent
}

// client is the Go client for opts.Server.
func (o *Options) client() (*swarmlease.Client, error) {
	el, err := swarmlease.NewClient(o.Server)
	if err != nil {
		return nil, cmdutil.Usage(fmt.Errorf("invalid %s %q: %w", config.KeyServer, o.Server, err))
	}
	return el, nil
}

// request runs one request of the client for opts.Server, bounded by --timeout.
func (o *Options) request(ctx context.Context, fn func(context.Context, *swarmlease.Client) error) error {
	el, err := o.client()
	if err != nil {
		return err
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	return fn(ctx, el)
}

// requestError says what to do about a request that failed: a server that does not answer is
// named with its URL and the setting that points at it (exit 5); a refused input is a usage
// error (cmdutil.Classify).
func (o *Options) requestError(err error) error {
	if cmdutil.NoAnswer(err) {
		return &cmdutil.UnreachableError{What: "the elections server at " + o.Server, Err: err,
			Fix: "start one (lfp-swarm-lease serve), or point --" + config.FlagName(config.KeyServer) + " at one that runs"}
	}
	return err
}

// createRun creates a room and prints its id (stdout) or its JSON.
func createRun(ctx context.Context, opts *Options) error {
	var room swarmlease.Room
	err := opts.request(ctx, func(ctx context.Context, el *swarmlease.Client) (err error) {
		room, err = el.CreateRoom(ctx)
		return err
	})
	if err != nil {
		return opts.requestError(err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, room)
	}
	fmt.Fprintln(opts.IO.Out, room.ID)
	fmt.Fprintf(opts.IO.Err, "created room %s on %s (campaign with: lfp-swarm-lease run --server %s --election %s -- CMD)\n", room.ID, opts.Server, opts.Server, room.ID)
	return nil
}

// statusRun prints the room's state.
func statusRun(ctx context.Context, opts *Options) error {
	var st swarmlease.RoomState
	err := opts.request(ctx, func(ctx context.Context, el *swarmlease.Client) (err error) {
		st, err = el.Status(ctx, opts.Room)
		return err
	})
	if err != nil {
		return opts.requestError(err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, watchcmd.ToRoomJSON(st))
	}
	return watchcmd.DescribeRoom(opts.IO.Out, st)
}

// watchRun follows the room as `watch URL/elections/ID` does.
func watchRun(ctx context.Context, opts *Options) error {
	return watchcmd.Run(ctx, &watchcmd.Options{IO: opts.IO, JSON: opts.JSON, URL: opts.Server + "/elections/" + opts.Room,
		InitialTimeout: swarmlease.DefaultInitialTimeout, Log: opts.Log})
}
