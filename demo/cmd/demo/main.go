// Command demo is the demo of lfp-swarm-lease: `demo serve` (the page, the fenced ledger and
// the proxy to the controller), `demo worker` (the leader-only writer that `lfp-swarm-lease
// run` starts) and `demo probe URL` (the containers' healthcheck: the images have no shell).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/internal/serve"
	"github.com/regbo/lfp-swarm-lease/demo/internal/worker"
)

const usage = `usage:
  demo serve  [--listen ADDR] [--write-listen ADDR] [--data DIR] [--controller URL]
  demo worker [--ledger URL] [--interval-ms N]
  demo probe  URL`

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stderr))
}

func run(args []string, getenv func(string) string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var err error
	switch args[0] {
	case "serve":
		err = serveCmd(ctx, args[1:], getenv, log)
	case "worker":
		err = workerCmd(ctx, args[1:], getenv, log)
	case "probe":
		err = probe(args[1:])
	default:
		fmt.Fprintf(stderr, "demo: unknown command %q\n%s\n", args[0], usage)
		return 2
	}
	var usageErr usageError
	switch {
	case errors.As(err, &usageErr):
		fmt.Fprintf(stderr, "demo %s: %v\n", args[0], err)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "demo %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// usageError is a bad flag or setting: exit 2.
type usageError struct{ error }

// envOr is the variable's value, or def when it is unset.
func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

func serveCmd(ctx context.Context, args []string, getenv func(string) string, log *slog.Logger) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	o := serve.Options{Log: log}
	fs.StringVar(&o.Listen, "listen", envOr(getenv, "DEMO_LISTEN", "0.0.0.0:8080"), "the page's HTTP address; it refuses writes (DEMO_LISTEN)")
	fs.StringVar(&o.WriteListen, "write-listen", envOr(getenv, "DEMO_WRITE_LISTEN", "127.0.0.1:8081"),
		"the workers' write address: IP:PORT, or NAME:PORT listening on the address of this host NAME resolves to (the stack: tasks.demo:8081) (DEMO_WRITE_LISTEN)")
	fs.StringVar(&o.DataDir, "data", envOr(getenv, "DEMO_DATA_DIR", "/data"), "directory of the ledger's file (DEMO_DATA_DIR)")
	fs.StringVar(&o.Controller, "controller", envOr(getenv, "DEMO_CONTROLLER_URL", "http://controller:8080"), "controller service URL (DEMO_CONTROLLER_URL)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	return serve.Run(ctx, o)
}

func workerCmd(ctx context.Context, args []string, getenv func(string) string, log *slog.Logger) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	o := worker.Options{Log: log}
	fs.StringVar(&o.Ledger, "ledger", envOr(getenv, "DEMO_LEDGER_URL", "http://demo:8081"), "the demo service's write address (DEMO_LEDGER_URL)")
	defInterval := envOr(getenv, "DEMO_WRITE_INTERVAL_MS", "1000")
	ms, err := strconv.Atoi(defInterval)
	if err != nil || ms <= 0 {
		return usageError{fmt.Errorf("DEMO_WRITE_INTERVAL_MS=%q: want a positive number of milliseconds", defInterval)}
	}
	fs.IntVar(&ms, "interval-ms", ms, "milliseconds between writes (DEMO_WRITE_INTERVAL_MS)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if ms <= 0 {
		return usageError{fmt.Errorf("--interval-ms=%d: want a positive number of milliseconds", ms)}
	}
	o.Interval = time.Duration(ms) * time.Millisecond
	if o.Identity, err = worker.IdentityFromEnv(getenv); err != nil {
		return usageError{err}
	}
	return worker.Run(ctx, o)
}

// probe is the healthcheck: exit 0 if URL answers 200 within 3 s.
func probe(args []string) error {
	if len(args) != 1 {
		return usageError{errors.New("want exactly one URL, e.g. http://127.0.0.1:8080/healthz")}
	}
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(args[0])
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", args[0], resp.Status)
	}
	return nil
}
