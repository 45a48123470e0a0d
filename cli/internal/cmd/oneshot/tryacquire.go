package oneshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/cli/internal/incarnation"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// defaultWaitPoll bounds each wait of try-acquire --wait between attempts when the store sends
// no notification (the file store and Swarm do: a release wakes the waiter at once).
const defaultWaitPoll = time.Second

// TryAcquireOptions are the options of try-acquire.
type TryAcquireOptions struct {
	Options
	// Caller is the PID of the process whose work the term is (--caller-pid); 0: none, every
	// try-acquire its own incarnation.
	Caller int
	// Wait, when positive, retries until the lease is won or Wait has passed (then exit 75),
	// like `etcdctl lock` or `consul lock -timeout`; 0 tries once.
	Wait time.Duration
	// Poll bounds each wait between attempts (default 1 s); the holder's expiry and the
	// store's notifications wake the waiter sooner.
	Poll time.Duration
	// Sleep waits d, or until wake receives, or until ctx ends (default: a timer); tests pass
	// one that moves a fake clock.
	Sleep func(ctx context.Context, d time.Duration, wake <-chan struct{}) error
}

// NewCmdTryAcquire is `try-acquire`; runF, when set, replaces tryAcquireRun (tests of parsing).
func NewCmdTryAcquire(f *cmdutil.Factory, runF func(context.Context, *TryAcquireOptions) error) *cobra.Command {
	opts := &TryAcquireOptions{}
	cmd := &cobra.Command{
		Use:   "try-acquire [--wait DURATION]",
		Short: "Try to become the holder; exit 75 if another contender holds the election",
		Long: `Try once, without waiting, to become the holder. On success print the new term's fence and
exit 0. When another contender holds a live lease, print who and until when another contender may
take over (its expiry plus max_clock_skew_ms), and exit 75. A term is the work of its caller:
with --caller-pid (a script's $$), a try-acquire for a caller that already holds the lease starts
a new term, and one for a restarted script takes its predecessor's live term once that caller
has exited with nothing left in its process group (seen on this host). Without it, every
try-acquire is a caller of its own, and its term ends by release or expiry.

With --wait DURATION, keep trying until the lease is won or DURATION has passed (then exit 75);
a release or expiry wakes the waiter at once.`,
		Example: `  lfp-swarm-lease try-acquire --store file:///var/lib/lease --namespace nightly-report --holder-id alice
  lfp-swarm-lease try-acquire --wait 2m && ./nightly-report
  lfp-swarm-lease try-acquire --caller-pid $$`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Wait < 0 {
				return cmdutil.Usage(fmt.Errorf("invalid --wait %v: must not be negative", opts.Wait))
			}
			inc, err := incarnation.OneShot(opts.Caller)
			if err != nil {
				return cmdutil.Usage(fmt.Errorf("invalid --caller-pid %d: %w", opts.Caller, err))
			}
			opts.Options = newOptions(f, cmd, false, lease.WithIncarnation(inc))
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return tryAcquireRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Wait, "wait", 0, "keep trying until the lease is won or this long has passed (e.g. 30s, 5m); 0 tries once")
	cmd.Flags().IntVar(&opts.Caller, "caller-pid", 0, "the process whose work the term is (a script's $$): its later try-acquires take its term at once, its exit proves the term's work gone")
	return addFlags(f, cmd)
}

// tryAcquireRun tries to win the lease, until opts.Wait has passed.
func tryAcquireRun(ctx context.Context, opts *TryAcquireOptions) error {
	now, sleep, poll := opts.Now, opts.Sleep, opts.Poll
	if sleep == nil {
		sleep = timing.SleepOrWake
	}
	if poll <= 0 {
		poll = defaultWaitPoll
	}
	// --timeout bounds the store operations; the wait comes on top of it.
	bounded := opts.Options
	if bounded.Timeout > 0 {
		bounded.Timeout += opts.Wait
	}
	return bounded.withSession(ctx, func(ctx context.Context, s *cmdutil.Session) error {
		e := s.Election
		giveUp := now().Add(opts.Wait)
		var wake <-chan struct{}
		if n, ok := e.Store().(lease.Notifier); ok && opts.Wait > 0 {
			if ch, err := n.Notify(ctx, e.Namespace()); err == nil {
				wake = ch
			}
		}
		for {
			res, err := e.TryAcquire(ctx)
			left := giveUp.Sub(now())
			// An earlier write of this attempt may have landed, but another contender holds the
			// lease now: with time left, wait for it like for any holder.
			if err != nil && (left <= 0 || !errors.Is(err, lease.ErrAmbiguous) || !res.Current.Held()) {
				return err
			}
			if res.Acquired || left <= 0 {
				return reportTryAcquire(opts, s, res)
			}
			if err := sleep(ctx, min(left, poll, e.UntilExpiry(res.Current)+time.Millisecond), wake); err != nil {
				return err
			}
		}
	})
}

// reportTryAcquire prints the attempt's outcome; held by another is exit 75.
func reportTryAcquire(opts *TryAcquireOptions, s *cmdutil.Session, res lease.TryAcquireResult) error {
	cur, ns, store := res.Current, s.Config.Namespace, s.Store.Describe()
	// When a contender may take over: the lease's expiry plus the skew every contender allows
	// the holder's clock.
	var availableAt time.Time
	if !res.Acquired && cur.Held() {
		availableAt = cur.ExpiresAt.Add(s.Config.MaxClockSkew)
	}
	if opts.JSON {
		out := tryAcquireJSON{
			Acquired: res.Acquired, Namespace: ns, Store: store,
			Current:     cmdutil.ToStateJSON(cur.Record, cur.Version, cur.Exists, cur.Acquired),
			AvailableAt: cmdutil.TimePtr(availableAt),
		}
		if res.Acquired {
			g := cmdutil.ToStateJSON(res.Grant.Record, res.Grant.Version, true, true)
			out.Grant = &g
		}
		if err := cmdutil.WriteJSON(opts.IO.Out, out); err != nil {
			return err
		}
	} else if res.Acquired {
		fmt.Fprintf(opts.IO.Out, "%d\n", res.Grant.Fence)
		fmt.Fprintf(opts.IO.Err, "acquired election %q as %q: fence %d, expires %s (%s)\n",
			ns, res.Grant.HolderID, res.Grant.Fence, cmdutil.FormatTime(res.Grant.ExpiresAt), store)
	} else {
		waited := ""
		if opts.Wait > 0 {
			waited = fmt.Sprintf(" (gave up after --wait %v)", opts.Wait)
		}
		fmt.Fprintf(opts.IO.Err, "election %q is held by %q (node %s, task %s) with fence %d until %s: its expiry %s plus %s %d%s (%s)\n",
			ns, cur.HolderID, cmdutil.Dash(cur.NodeID), cmdutil.Dash(cur.TaskID), cur.Fence, cmdutil.FormatTime(availableAt),
			cmdutil.FormatTime(cur.ExpiresAt), config.KeyMaxClockSkewMs, s.Config.MaxClockSkew.Milliseconds(), waited, store)
	}
	if !res.Acquired {
		return &cmdutil.ExitError{Code: cmdutil.ExitHeld, Err: cmdutil.ErrSilent}
	}
	return nil
}
