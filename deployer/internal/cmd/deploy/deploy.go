// Package deploy is `deployer deploy [--dry-run] [--no-build-arm] [--no-push-images
// --image-tag VERSION]`: it builds and pushes the controller and demo images (or resolves
// published ones), pins the demo stack to the demo image's digest, validates the stack, and
// creates or updates the deployer's own Portainer stack — in that order: nothing remote
// changes before every read and the validation have passed, and Portainer is only written once
// the images are in the registry. Portainer's write itself is not atomic (`docker stack
// deploy` changes services one by one): a failed create names the services it left.
package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/gitrun"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/stackfile"
	"github.com/regbo/lfp-swarm-lease/images"
)

// Options are the inputs of `deployer deploy`.
type Options struct {
	// IO receives the plan and the result (Out) and progress and warnings (ErrOut).
	IO cmdutil.IOStreams
	// Dir is the repository's work tree: the images' source and deploy/stack.yml.
	Dir string
	// Git runs git in Dir, for the commit the images are stamped with.
	Git gitrun.Runner
	// Now is the clock: the images' creation time and the default tag.
	Now func() time.Time
	// Publish builds and pushes the images (default images.PublishTo).
	Publish func(context.Context, images.Build, images.Target) (images.Published, error)

	// Flags are the command's flags, a layer of the settings.
	Flags *pflag.FlagSet
	// EnvFile is --env-file.
	EnvFile string
	// DryRun does every read and changes nothing.
	DryRun bool
	// NoBuildArm builds linux/amd64 only.
	NoBuildArm bool
	// NoPushImages deploys the already published images of the image tag.
	NoPushImages bool

	// commitHash is HEAD's hash ("" outside git), read once.
	commitHash string
}

// NewCmdDeploy returns the deploy command. runF, when set, receives the options instead of
// deployRun (tests of flag parsing).
func NewCmdDeploy(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Dir: f.Dir, Git: f.Git, Now: f.Now, Publish: images.PublishTo}
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Build, push and deploy the demo stack to Portainer",
		Long: `Builds the controller and demo images for linux/amd64 and linux/arm64, pushes them to the
configured registry, pins deploy/stack.yml to the demo image's digest, validates the stack and
creates or updates the Portainer stack of that name — only one that Portainer manages on the
configured endpoint; a stack of that name deployed outside Portainer, or on another endpoint,
is refused.

Settings come from flags, the environment (SWARM_LEASE_DEPLOY_*), *_FILE variables and .env,
in that order (see .env.example). Secrets are read from variables or files only.

--dry-run does every read (Portainer, the endpoint, the stack, the registry), prints the plan
and the rendered stack, and changes nothing anywhere.`,
		Example: `  # what would happen, changing nothing
  deployer deploy --dry-run
  # build amd64 only, push and deploy
  deployer deploy --no-build-arm
  # deploy the images release 0.1.0 published
  deployer deploy --no-push-images --image-tag 0.1.0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Flags = cmd.Flags()
			if runF != nil {
				return runF(opts)
			}
			if err := f.NeedRepository("deploy"); err != nil {
				return err
			}
			return deployRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "do every read, print the plan and the rendered stack, change nothing")
	cmd.Flags().BoolVar(&opts.NoBuildArm, "no-build-arm", false, "build linux/amd64 only")
	cmd.Flags().BoolVar(&opts.NoPushImages, "no-push-images", false, "build and push nothing: deploy the published images of --image-tag")
	config.AddFlags(cmd.Flags(), &opts.EnvFile)
	return cmd
}

func deployRun(ctx context.Context, opts *Options) error {
	cfg, client, err := config.Connect(config.Input{Flags: opts.Flags, EnvFile: opts.EnvFile, Dir: opts.Dir, Registry: true}, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	if err := checkImageFlags(opts, cfg); err != nil {
		return err
	}
	if opts.Git != nil {
		opts.commitHash, _ = opts.Git.Git(ctx, "rev-parse", "HEAD")
	}
	content, err := os.ReadFile(filepath.Join(opts.Dir, stackfile.Path))
	if err != nil {
		return fmt.Errorf("the stack file: %w", err)
	}

	// Reads only, up to the push: Portainer, the endpoint, the stack's owner, the registry.
	status, err := client.Status(ctx)
	if err != nil {
		return cfg.ExplainPortainer(err)
	}
	found, err := ownership.Find(ctx, client, cfg.Endpoint, cfg.StackName)
	if err != nil {
		return cfg.ExplainPortainer(err)
	}
	imgs, err := planImages(ctx, opts, cfg)
	if err != nil {
		return err
	}
	demo := imgs.published.Demo
	if demo == "" {
		demo = cfg.Repository() + "/" + images.ControllerName + "-demo@" + placeholderDigest
	}
	env, err := variables(cfg, demo).Env(content)
	if err != nil {
		return err
	}
	rendered, err := stackfile.Render(ctx, cfg.StackName, stackfile.Path, content, env)
	if err != nil {
		return err
	}
	p := plan{portainer: status, url: cfg.PortainerURL, found: found, name: cfg.StackName, images: imgs, env: env}
	p.print(opts.IO.Out)
	if opts.DryRun {
		printDryRun(opts, imgs, rendered)
		return nil
	}

	if imgs.platforms != nil {
		fmt.Fprintf(opts.IO.ErrOut, "building %s and pushing to %s (tag %s)\n", platformNames(imgs.platforms), imgs.target.Registry, imgs.target.Tag)
		if err := pushImages(ctx, opts, cfg, &imgs); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.Out, "pushed %s\npushed %s\n", imgs.published.Controller, imgs.published.Demo)
		demo = imgs.published.Demo
		if env, err = variables(cfg, demo).Env(content); err != nil {
			return err
		}
		if _, err := stackfile.Render(ctx, cfg.StackName, stackfile.Path, content, env); err != nil {
			return err
		}
	}
	// The build and push take minutes: the plan's stack may have been created, deleted or
	// moved meanwhile, so the write goes on a fresh read or not at all.
	now, err := ownership.Find(ctx, client, cfg.Endpoint, cfg.StackName)
	if err != nil {
		return cfg.ExplainPortainer(err)
	}
	if err := found.Unchanged(now); err != nil {
		return err
	}
	return apply(ctx, opts, cfg, client, now, portainerStack{file: string(content), env: env, image: demo})
}

// printDryRun ends a dry run's plan with the rendered stack.
func printDryRun(opts *Options, imgs imagePlan, rendered []byte) {
	fmt.Fprintf(opts.IO.Out, "\nrendered stack (%s with the variables above", stackfile.Path)
	if imgs.platforms != nil {
		fmt.Fprintf(opts.IO.Out, "; %s stands for the digest the push will give", placeholderDigest)
	}
	fmt.Fprintf(opts.IO.Out, "):\n%s\ndry run: nothing was built, pushed or deployed\n", rendered)
}

// portainerStack is what Portainer gets: the stack file unchanged, its whole Env, and the demo
// image pinned in it (for the message).
type portainerStack struct {
	file  string
	env   []portainer.EnvVar
	image string
}

// apply creates the stack, or updates the deployer's own record of it: the one remote write
// of Portainer.
func apply(ctx context.Context, opts *Options, cfg *config.Config, client *portainer.Client, found ownership.Finding, s portainerStack) error {
	ep := found.Endpoint
	if found.Stack == nil {
		fmt.Fprintf(opts.IO.ErrOut, "creating stack %s on endpoint %s\n", cfg.StackName, ep.Name)
		st, err := client.CreateSwarmStack(ctx, ep.ID, portainer.CreateStackRequest{Name: cfg.StackName, SwarmID: found.SwarmID, StackFileContent: s.file, Env: s.env})
		if err != nil {
			return createFailed(ctx, client, ep, cfg, err)
		}
		fmt.Fprintf(opts.IO.Out, "created stack %s (Portainer stack %d) on endpoint %s with %s\n", st.Name, st.ID, ep.Name, s.image)
		return nil
	}
	fmt.Fprintf(opts.IO.ErrOut, "updating stack %s (Portainer stack %d) on endpoint %s\n", found.Stack.Name, found.Stack.ID, ep.Name)
	st, err := client.UpdateStack(ctx, found.Stack.ID, ep.ID, portainer.UpdateStackRequest{StackFileContent: s.file, Env: s.env, Prune: true, PullImage: true})
	if err != nil {
		return cfg.ExplainPortainer(err)
	}
	fmt.Fprintf(opts.IO.Out, "updated stack %s (Portainer stack %d) on endpoint %s with %s\n", st.Name, st.ID, ep.Name, s.image)
	return nil
}

// createFailed explains a failed create. `docker stack deploy` creates the services one by
// one and Portainer records the stack only when it succeeds, so a failure halfway leaves
// services without a record — which the next deploy and remove would refuse as deployed
// outside Portainer. The error names them and how to take them away.
func createFailed(ctx context.Context, client *portainer.Client, ep portainer.Endpoint, cfg *config.Config, err error) error {
	err = cfg.ExplainPortainer(err)
	left, lerr := client.ExternalStackServices(ctx, ep.ID, cfg.StackName)
	if lerr != nil {
		return fmt.Errorf("%w (and listing the services the failed create may have left failed too: %v)", err, lerr)
	}
	if len(left) == 0 {
		return err
	}
	return fmt.Errorf("%w: this create left services %s on endpoint %s, which Portainer has no record of: remove them with `docker stack rm %s` on a manager of that Swarm, then deploy again", err, strings.Join(left, ", "), ep.Name, cfg.StackName)
}

// variables are the stack's variables that the settings give, with the demo image demo; their
// Env adds the stack file's other variables with the file's defaults.
func variables(cfg *config.Config, demo string) stackfile.Variables {
	return stackfile.Variables{
		DemoImage: demo, LeaseTTLMs: cfg.LeaseTTLMs, Replicas: cfg.Replicas, EndpointMode: cfg.EndpointMode,
		DemoPort: cfg.DemoPort, DemoPortMode: cfg.DemoPortMode, DockerSocket: cfg.DockerSocket,
	}
}
