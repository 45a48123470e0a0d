// Package watchcmd is the `watch URL` command: it follows an election through a controller's
// event stream (GET /v1/events), or a room of an elections server (GET /elections/ID/watch)
// when URL names one, and prints every change.
package watchcmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
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
		Long: `Print the election's state from the controller at URL (run's or serve's /v1/events), then one
line per change of holder or fence; a room's URL (…/elections/ID) follows that room. It reconnects
by itself after the first state, and needs no store settings.`,
		Example: `  lfp-swarm-lease watch http://controllers:8080
  lfp-swarm-lease watch --json localhost:8080/elections/nightly-report`,
		Annotations: map[string]string{cmdutil.DocsAnnotation: "docs/http-api.md"},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usage(errors.New("watch needs one URL, of a controller (http://HOST:PORT) or of a room (http://HOST:PORT/elections/ID)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := config.BaseURL(args[0])
			if err != nil {
				return cmdutil.Usage(fmt.Errorf("invalid URL: %w", err))
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
	f.AddJSONFlag(cmd.Flags())
	return cmd
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
	opts.Log.Level = cmp.Or(opts.Log.Level, "warn")
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

// watchFailed reports why the watch ended, as the root reports every command's failure
// (cmdutil.Report); a server that never answered is named with what to do. With --json the
// error object stays on one line, so that stdout remains one JSON object per line to the end.
func watchFailed(opts *Options, err error) error {
	if cmdutil.NoAnswer(err) {
		what := "the controller"
		if _, _, room := roomOf(opts.URL); room {
			what = "the elections server"
		}
		err = &cmdutil.UnreachableError{What: what + " at " + opts.URL, Err: err,
			Fix: fmt.Sprintf("no state within --initial-timeout %v: start it, or give the URL of one that runs", opts.InitialTimeout)}
	} else {
		err = fmt.Errorf("watch %s: %w", opts.URL, err)
	}
	code := cmdutil.Report(opts.IO, opts.JSON, err)
	return &cmdutil.ExitError{Code: code, Err: cmdutil.ErrSilent}
}

// Run is watchRun for other commands that follow a URL (`elections watch`).
func Run(ctx context.Context, opts *Options) error { return watchRun(ctx, opts) }
