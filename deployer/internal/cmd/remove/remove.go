// Package remove is `deployer remove` (alias rm): it deletes the deployer's own Portainer
// stack — the configured name, on the configured endpoint and its Swarm, a record Portainer
// manages — and nothing else: a stack of that name deployed outside Portainer or on another
// endpoint is refused, volumes stay (Portainer's delete keeps them), and a stack that is
// already gone is success, so that remove can be run again safely.
package remove

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// Options are the inputs of `deployer remove`.
type Options struct {
	// IO receives the result (Out) and warnings (ErrOut).
	IO cmdutil.IOStreams
	// Dir is the repository's work tree, where the default .env is; "" outside a work tree
	// (remove needs no repository), where the default .env is the working directory's.
	Dir string
	// Flags are the command's flags, a layer of the settings.
	Flags *pflag.FlagSet
	// EnvFile is --env-file.
	EnvFile string
}

// NewCmdRemove returns the remove command. runF, when set, receives the options instead of
// removeRun (tests of flag parsing).
func NewCmdRemove(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Dir: f.Dir}
	cmd := &cobra.Command{
		Use:     "remove",
		Aliases: []string{"rm"},
		Short:   "Remove the demo stack from Portainer",
		Long: `Deletes the Portainer stack of the configured name on the configured endpoint, after
checking that Portainer manages it there. A stack of that name deployed outside Portainer, or
on another endpoint, is refused and left alone. Volumes are kept. Nothing to remove is
success (exit 0).`,
		Example: `  deployer remove
  deployer rm --env-file staging.env`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Flags = cmd.Flags()
			if runF != nil {
				return runF(opts)
			}
			return removeRun(cmd.Context(), opts)
		},
	}
	config.AddRemoveFlags(cmd.Flags(), &opts.EnvFile)
	return cmd
}

func removeRun(ctx context.Context, opts *Options) error {
	cfg, client, err := config.Connect(config.Input{Flags: opts.Flags, EnvFile: opts.EnvFile, Dir: opts.Dir}, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	found, err := ownership.Find(ctx, client, cfg.Endpoint, cfg.StackName)
	if err != nil {
		return cfg.ExplainPortainer(err)
	}
	ep := found.Endpoint
	if found.Stack == nil {
		fmt.Fprintf(opts.IO.Out, "nothing to remove: no stack %s on endpoint %s\n", cfg.StackName, ep.Name)
		return nil
	}
	err = client.DeleteStack(ctx, found.Stack.ID, ep.ID)
	if errors.Is(err, portainer.ErrStackNotFound) {
		// Deleted by someone else since Find read it: what remove was to do is done.
		fmt.Fprintf(opts.IO.Out, "nothing to remove: stack %s (Portainer stack %d) on endpoint %s was deleted meanwhile\n", found.Stack.Name, found.Stack.ID, ep.Name)
		return nil
	}
	if err != nil {
		return cfg.ExplainPortainer(err)
	}
	fmt.Fprintf(opts.IO.Out, "removed stack %s (Portainer stack %d) from endpoint %s; its volumes are kept\n", found.Stack.Name, found.Stack.ID, ep.Name)
	return nil
}
