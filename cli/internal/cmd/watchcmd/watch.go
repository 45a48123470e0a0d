// Package watchcmd is the `watch URL` command: it follows an election through a controller's
// event stream (GET /v1/events), or a room of an elections server (GET /elections/ID/watch)
// when URL names one, and prints every change.
package watchcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// Options are the watch command's.
type Options struct {
	// IO receives the states on Out (one line or one JSON object each) and reconnects on Err.
	IO cmdutil.IOStreams
	// JSON prints one JSON object per line.
	JSON bool
	// URL is the controller's base URL, or a room's URL (…/elections/ID).
	URL string
	// InitialTimeout bounds the wait for the first state.
	InitialTimeout time.Duration
	// HTTPClient makes the requests (default http.DefaultClient).
	HTTPClient *http.Client
	// Log is --log-format and --log-level (default warn: reconnects only).
	Log cmdutil.LogOptions
}

// NewCmdWatch is `watch URL`; runF, when set, replaces watchRun (tests of parsing).
func NewCmdWatch(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "watch URL",
		Short: "Print the election's (or a room's) state from an event stream, then every change",
		Long: `Follow the election through GET /v1/events of the controller at URL (any replica, or the
Swarm service's VIP): print the current state, then one line per change of holder, fence or
liveness (--json: one JSON object per line). Routine renewals are not changes. A URL naming a
room of an elections server (http://HOST:PORT/elections/ID) follows that room instead, through
GET /elections/ID/watch. A URL without a scheme gets http://.

The first state must arrive within --initial-timeout; after that, watch reconnects forever with
jittered exponential back-off (reported on stderr), and a replica replaying the state already
printed prints nothing. It needs no store settings: it only reads the HTTP API. A server that
serves no election namespace (a serve without one) is reported at once.

Exit codes: 0 after SIGINT/SIGTERM; 5 when no state arrived within --initial-timeout; 2 for an
invalid URL or flag, or a server without an election namespace.`,
		Example: `  lfp-swarm-lease watch http://controllers:8080
  lfp-swarm-lease watch --json localhost:8080/elections/nightly-report`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usage(errors.New("watch needs the controller's URL: lfp-swarm-lease watch http://HOST:PORT"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := NormalizeURL(args[0])
			if err != nil {
				return cmdutil.Usage(err)
			}
			if opts.InitialTimeout <= 0 {
				return cmdutil.Usage(fmt.Errorf("invalid --initial-timeout %v: must be positive", opts.InitialTimeout))
			}
			opts.IO, opts.JSON, opts.URL = f.IOStreams, f.JSON, u
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return watchRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddLogFlags(cmd.Flags(), &opts.Log, "warn")
	cmd.Flags().DurationVar(&opts.InitialTimeout, "initial-timeout", swarmlease.DefaultInitialTimeout,
		"give up when the first state has not arrived after this long")
	return cmd
}

// NormalizeURL gives a URL without a scheme http:// and rejects what can never work, so that it
// is a usage error (exit 2) instead of a minute of retries.
func NormalizeURL(raw string) (string, error) {
	withScheme := raw
	if !strings.Contains(raw, "://") {
		withScheme = "http://" + raw
	}
	u, err := url.Parse(withScheme)
	if err != nil {
		return "", fmt.Errorf("invalid URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("invalid URL %q: want http://HOST:PORT or https://HOST:PORT", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("invalid URL %q: credentials do not belong in a URL; put authentication in a proxy", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// roomOf splits a room URL (…/elections/ID) into the server's base URL and the room id; ok is
// false for any other URL.
func roomOf(u string) (base, room string, ok bool) {
	i := strings.LastIndex(u, "/elections/")
	if i < 0 {
		return "", "", false
	}
	room = u[i+len("/elections/"):]
	if room == "" || strings.Contains(room, "/") {
		return "", "", false
	}
	return u[:i], room, true
}

// watchRun prints the states at opts.URL until ctx ends (SIGINT, SIGTERM).
func watchRun(ctx context.Context, opts *Options) error {
	// Reconnects are status, not data: warnings on stderr.
	if opts.Log.Level == "" {
		opts.Log.Level = "warn"
	}
	log, err := opts.Log.Logger(opts.IO.Err)
	if err != nil {
		return err
	}
	if base, room, ok := roomOf(opts.URL); ok {
		return watchRoom(ctx, opts, base, room, log)
	}
	if err := checkNamespace(ctx, opts); err != nil {
		return err
	}
	obs := swarmlease.Connect(opts.URL, opts.clientOptions(log)...)
	enc := json.NewEncoder(opts.IO.Out) // compact: one object per line
	for st, err := range obs.Watch(ctx) {
		if err != nil {
			return watchFailed(opts, err)
		}
		if opts.JSON {
			err = enc.Encode(st)
		} else {
			err = describeState(opts.IO.Out, st)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// clientOptions are the Go client's options for this watch.
func (o *Options) clientOptions(log *slog.Logger) []swarmlease.Option {
	opts := []swarmlease.Option{swarmlease.WithInitialTimeout(o.InitialTimeout), swarmlease.WithLogger(log)}
	if o.HTTPClient != nil {
		opts = append(opts, swarmlease.WithHTTPClient(o.HTTPClient))
	}
	return opts
}

// httpClient is the client of the namespace check.
func (o *Options) httpClient() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return http.DefaultClient
}

// checkNamespace asks the controller for its election once: a server that answers 404 serves
// no election namespace, which no retry changes. Any other failure is left to the watch, which
// retries until the initial timeout.
func checkNamespace(ctx context.Context, opts *Options) error {
	rctx, cancel := context.WithTimeout(ctx, min(opts.InitialTimeout, 10*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, opts.URL+"/v1/info", nil)
	if err != nil {
		return cmdutil.Usage(fmt.Errorf("invalid URL %q: %w", opts.URL, err))
	}
	resp, err := opts.httpClient().Do(req)
	if err != nil {
		return nil
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return cmdutil.Usage(fmt.Errorf("watch %s: this server serves no election namespace (GET /v1/info answered 404): give its serve a namespace, or watch a room with %s/elections/ID",
			opts.URL, opts.URL))
	}
	return nil
}

// watchFailed reports why the watch ended. With --json the error object stays on one line, so
// that stdout remains one JSON object per line to the end.
func watchFailed(opts *Options, err error) error {
	code, name := cmdutil.ExitFailure, "internal"
	switch {
	case errors.Is(err, swarmlease.ErrInitialTimeout):
		code, name = cmdutil.ExitUnavailable, "controller_unreachable"
	case errors.Is(err, swarmlease.ErrInvalidInput):
		code, name = cmdutil.ExitUsage, "invalid_configuration"
	}
	err = fmt.Errorf("watch %s: %w", opts.URL, err)
	fmt.Fprintf(opts.IO.Err, "lfp-swarm-lease: %v\n", err)
	if opts.JSON {
		_ = json.NewEncoder(opts.IO.Out).Encode(cmdutil.ErrorJSON{Error: err.Error(), Code: name, Exit: code})
	}
	return &cmdutil.ExitError{Code: code, Err: cmdutil.ErrSilent}
}

// Run is watchRun for other commands that follow a URL (`elections watch`).
func Run(ctx context.Context, opts *Options) error { return watchRun(ctx, opts) }
