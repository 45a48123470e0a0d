package cmdutil

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// IOStreams are a command's output streams: data (human or JSON) on Out, status and errors on
// Err.
type IOStreams struct {
	Out, Err io.Writer
}

// Factory holds what every command needs from the outside world, so that tests run commands
// in-process with their own streams, environment and clock.
type Factory struct {
	IOStreams
	// Environ returns the environment; Hostname the container lookup key (HOSTNAME).
	Environ  func() []string
	Hostname func() string
	// Now is the wall clock (default time.Now).
	Now func() time.Time
	// Discover finds the current Swarm task (default: through the Docker engine of the
	// standard environment, DOCKER_HOST).
	Discover func(ctx context.Context, hostname string) (config.Task, error)

	// EnvPrefix, JSON and Timeout are the flags --env-prefix, --json and --timeout of the
	// commands that take them (AddEnvPrefixFlag, AddJSONFlag, AddTimeoutFlag).
	EnvPrefix string
	JSON      bool
	Timeout   time.Duration
}

// AddEnvPrefixFlag adds --env-prefix, which every command that reads settings takes.
func (f *Factory) AddEnvPrefixFlag(fs *pflag.FlagSet) {
	fs.StringVar(&f.EnvPrefix, "env-prefix", config.DefaultEnvPrefix, "prefix of every variable (PREFIX_*) and container label")
}

// AddJSONFlag adds --json.
func (f *Factory) AddJSONFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&f.JSON, "json", false, "print one JSON object instead of text (a failure too)")
}

// AddTimeoutFlag adds --timeout.
func (f *Factory) AddTimeoutFlag(fs *pflag.FlagSet) {
	fs.DurationVar(&f.Timeout, "timeout", time.Minute, "give up after this long (a Swarm write can block 20 s while Raft elects)")
}

// Clock returns Now, or time.Now when unset.
func (f *Factory) Clock() func() time.Time {
	if f.Now != nil {
		return f.Now
	}
	return time.Now
}

// Warn prints a warning on stderr.
func (f *Factory) Warn(w string) { fmt.Fprintf(f.Err, "lfp-swarm-lease: warning: %s\n", w) }

// LoadConfig reads the settings of cmd's flags and the environment as l describes the command's
// needs (NoHolderID, NamespaceOptional, Remote, StoreDefault); the Factory fills in the
// prefix, flags, environment, warnings and discovery. An invalid setting is a UsageError.
func (f *Factory) LoadConfig(cmd *cobra.Command, l config.Loader) (*config.Config, error) {
	l.EnvPrefix = f.EnvPrefix
	l.Flags = cmd.Flags()
	l.Environ = f.Environ
	l.Warn = f.Warn
	discover := f.Discover
	if discover == nil {
		discover = DiscoverTask
	}
	l.Discover = func(ctx context.Context) (config.Task, error) { return discover(ctx, f.Hostname()) }
	cfg, err := l.Load(cmd.Context())
	if err != nil {
		return nil, Usage(err)
	}
	return cfg, nil
}

// DiscoverTask finds the Swarm task whose container is named hostname through the Docker
// engine of the standard environment.
func DiscoverTask(ctx context.Context, hostname string) (config.Task, error) {
	docker, err := client.New(client.FromEnv)
	if err != nil {
		return config.Task{}, err
	}
	defer docker.Close()
	t, err := swarmstore.Discover(ctx, docker, hostname)
	if err != nil {
		return config.Task{}, err
	}
	return config.Task{ServiceName: t.ServiceName, NodeID: t.NodeID, TaskID: t.TaskID, Labels: t.Labels, Container: t.Container, Ended: t.Ended}, nil
}
