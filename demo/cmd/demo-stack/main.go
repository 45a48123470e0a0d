// Command demo-stack runs the demo on the Swarm at DOCKER_HOST with images built from this
// work tree (`bun run demo:up` / `demo:down`). Both check first, in seconds, that DOCKER_HOST is
// a Swarm manager, and say how to get one; down prints what it removed:
//
//	demo-stack up   [--name lfp-demo] [--port 8088] [--platforms linux/amd64,linux/arm64] [--json]
//	demo-stack down [--name lfp-demo]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/internal/stack"
	"github.com/regbo/lfp-swarm-lease/images"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "demo-stack:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 || (args[0] != "up" && args[0] != "down") {
		return fmt.Errorf("usage: demo-stack up|down [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	name := fs.String("name", "lfp-demo", "stack name")
	port := fs.Int("port", 8088, "the page's published port (up)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "image platforms (up)")
	asJSON := fs.Bool("json", false, "print the result as JSON (up)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	var env multiFlag
	fs.Var(&env, "env", "a stack variable NAME=VALUE (up; repeatable), e.g. LEASE_TTL_MS=5000")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, *timeout)
	defer cancelTimeout()
	if args[0] == "down" {
		removed, err := stack.Remove(ctx, *name)
		switch {
		case removed.Empty() && err == nil:
			fmt.Printf("nothing to remove: no stack %s, no volume of it, no lease anchor\n", *name)
		case !removed.Empty():
			fmt.Println(removed)
		}
		return err
	}
	wd, _ := os.Getwd()
	root, err := stack.FindRoot(wd)
	if err != nil {
		return err
	}
	b := images.Build{Version: "dev", Commit: gitCommit(root)}
	if b.Platforms, err = images.ParsePlatforms(*platforms); err != nil {
		return fmt.Errorf("--platforms: %w", err)
	}
	up, err := stack.Deploy(ctx, stack.Options{Name: *name, Root: root, Port: *port, Env: env}, b, os.Stderr)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(up)
	}
	fmt.Printf("the demo is at %s (stack %s; remove it with `bun run demo:down`)\n", up.URL, up.Stack)
	return nil
}

// gitCommit is HEAD's hash, or "" outside a git checkout.
func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("want NAME=VALUE, not %q", v)
	}
	*m = append(*m, v)
	return nil
}
