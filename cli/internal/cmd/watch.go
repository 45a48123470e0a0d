package cmd

import (
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

func (a *App) newWatchCmd() *cobra.Command {
	var initialTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "watch URL",
		Short: "Print the election's state from a controller's event stream, then every change",
		Long: `Follow the election through GET /v1/events of the controller at URL (any replica, or the
Swarm service's VIP): print the current state, then one line per change of holder, fence or
liveness (--json: one JSON object per line). Routine renewals are not changes.

The first state must arrive within --initial-timeout; after that, watch reconnects forever with
jittered exponential back-off (reported on stderr), and a replica replaying the state already
printed prints nothing. It needs no store settings: it only reads the controller's HTTP API.

Exit codes: 0 after SIGINT/SIGTERM; 5 when no state arrived within --initial-timeout; 2 for an
invalid URL or flag.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usage(errors.New("watch needs the controller's URL: lfp-swarm-lease watch http://HOST:PORT"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkControllerURL(args[0]); err != nil {
				return cmdutil.Usage(err)
			}
			if initialTimeout <= 0 {
				return cmdutil.Usage(fmt.Errorf("invalid --initial-timeout %v: must be positive", initialTimeout))
			}
			return a.watch(cmd.Context(), args[0], initialTimeout)
		},
	}
	cmd.Flags().DurationVar(&initialTimeout, "initial-timeout", swarmlease.DefaultInitialTimeout,
		"give up when the first state has not arrived after this long")
	return cmd
}

// checkControllerURL rejects what can never work, so that it is a usage error (exit 2)
// instead of a minute of retries.
func checkControllerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid URL %q: want http://HOST:PORT or https://HOST:PORT", raw)
	}
	return nil
}

// watch prints the states of the election at baseURL until ctx ends (SIGINT, SIGTERM).
func (a *App) watch(ctx context.Context, baseURL string, initialTimeout time.Duration) error {
	// Reconnects are status, not data: warnings on stderr.
	log := slog.New(slog.NewTextHandler(a.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	obs := swarmlease.Connect(baseURL, swarmlease.WithInitialTimeout(initialTimeout), swarmlease.WithLogger(log))
	enc := json.NewEncoder(a.Out) // compact: one object per line
	for st, err := range obs.Watch(ctx) {
		if err != nil {
			return a.watchFailed(baseURL, err)
		}
		if a.JSON {
			err = enc.Encode(st)
		} else {
			err = describeState(a.Out, st)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// watchFailed reports why the watch ended. With --json the error object stays on one line, so
// that stdout remains one JSON object per line to the end.
func (a *App) watchFailed(baseURL string, err error) error {
	code, name := cmdutil.ExitFailure, "internal"
	if errors.Is(err, swarmlease.ErrInitialTimeout) {
		code, name = cmdutil.ExitUnavailable, "controller_unreachable"
	}
	err = fmt.Errorf("watch %s: %w", baseURL, err)
	fmt.Fprintf(a.Err, "lfp-swarm-lease: %v\n", err)
	if a.JSON {
		_ = json.NewEncoder(a.Out).Encode(cmdutil.ErrorJSON{Error: err.Error(), Code: name, Exit: code})
	}
	return &cmdutil.ExitError{Code: code, Err: cmdutil.ErrSilent}
}

// describeState prints one state as one line.
func describeState(w io.Writer, s swarmlease.State) error {
	var err error
	switch {
	case !s.Exists:
		_, err = fmt.Fprintf(w, "%s: the election does not exist\n", s.Namespace)
	case s.Acquired:
		_, err = fmt.Fprintf(w, "%s: held by %s (node %s, task %s), fence %d, since %s, expires %s\n",
			s.Namespace, s.HolderID, cmdutil.Dash(s.NodeID), cmdutil.Dash(s.TaskID), s.Fence, formatTimePtr(s.AcquiredAt), formatTimePtr(s.ExpiresAt))
	case s.HolderID != "":
		_, err = fmt.Fprintf(w, "%s: no holder: the lease of %s expired at %s, fence %d\n",
			s.Namespace, s.HolderID, formatTimePtr(s.ExpiresAt), s.Fence)
	default:
		_, err = fmt.Fprintf(w, "%s: no holder, fence %d\n", s.Namespace, s.Fence)
	}
	return err
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return cmdutil.FormatTime(*t)
}
