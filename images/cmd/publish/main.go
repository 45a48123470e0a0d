// Command publish builds the controller and demo images and pushes them to a registry, printing
// their references by digest as JSON — for the release and the deployer:
//
//	go run ./images/cmd/publish --registry 127.0.0.1:5000 --tag v0.1.0 --version 0.1.0 --commit $(git rev-parse HEAD)
//
// Pushing uses the Docker credentials of the machine (~/.docker/config.json); loopback
// registries are spoken to over plain HTTP.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/regbo/lfp-swarm-lease/images"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "publish:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	registry := fs.String("registry", "", "registry and path, e.g. docker.io/regbo or 127.0.0.1:5000 (required)")
	tag := fs.String("tag", "latest", "image tag")
	root := fs.String("root", ".", "the repository root")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "platforms, comma-separated")
	var b images.Build
	fs.StringVar(&b.Version, "version", "dev", "version stamped into the binary and labels")
	fs.StringVar(&b.Commit, "commit", "", "source revision for the labels")
	fs.StringVar(&b.Date, "date", "", "build date, RFC 3339 (default the epoch: reproducible digests)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *registry == "" {
		return fmt.Errorf("--registry is required (e.g. --registry 127.0.0.1:5000)")
	}
	b.Root = *root
	var err error
	if b.Platforms, err = images.ParsePlatforms(*platforms); err != nil {
		return fmt.Errorf("--platforms: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	pub, err := images.Publish(ctx, b, *registry, *tag)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(pub)
}
