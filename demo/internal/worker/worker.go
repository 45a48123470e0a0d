// Package worker is `demo worker`: the leader-only child of `lfp-swarm-lease run`. Every
// interval it appends an entry carrying the fence it was started with to the ledger. It never
// checks whether it is still the leader — a real stale leader would not know either — so the
// ledger's fencing rule is what stops it.
package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/ledger"
)

// Options are the settings of `demo worker`.
type Options struct {
	// Ledger is the base URL of the demo service's write address.
	Ledger string
	// Interval is the time between writes.
	Interval time.Duration
	// Identity is the write's fence, holder, node and task.
	Identity ledger.Write
	// Log receives one line per write.
	Log *slog.Logger
	// Now is the clock stamped on each write (default time.Now).
	Now func() time.Time
}

// IdentityFromEnv reads the term `run` hands its child: SWARM_LEASE_FENCE and the identity.
func IdentityFromEnv(getenv func(string) string) (ledger.Write, error) {
	raw := getenv("SWARM_LEASE_FENCE")
	fence, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || fence == 0 {
		return ledger.Write{}, fmt.Errorf("SWARM_LEASE_FENCE=%q: want the positive fence that `lfp-swarm-lease run` exports; run the worker as `lfp-swarm-lease run -- demo worker`", raw)
	}
	holder := getenv("SWARM_LEASE_HOLDER_ID")
	if holder == "" {
		return ledger.Write{}, fmt.Errorf("SWARM_LEASE_HOLDER_ID is empty: run the worker under `lfp-swarm-lease run`, which sets it")
	}
	return ledger.Write{Fence: fence, Holder: holder, Node: getenv("SWARM_LEASE_NODE_ID"), Task: getenv("SWARM_LEASE_TASK_ID")}, nil
}

// Timeouts of a write: a write is an fsync away from its answer, so a ledger that has not
// answered within writeTimeout is not there (a VIP without a healthy task drops the packets, a
// connection to a task that is gone never answers), and the worker tries again after a short
// back-off instead of waiting out a long timeout and then the interval: the first write of a
// term lands within a second or two of the ledger becoming reachable.
const (
	writeTimeout = time.Second
	// retryMin is the first wait after a failed write; it doubles up to the interval.
	retryMin = 100 * time.Millisecond
	// maxAnswer bounds how much of the ledger's answer is read: one entry is a few hundred bytes.
	maxAnswer = 64 << 10
)

// Run writes at once, then every interval, until ctx ends (SIGTERM); after a failed write it
// tries again sooner (retryMin, doubling up to the interval). A write in flight when ctx ends is
// finished first, so the ledger's answer is logged and the worker exits cleanly.
func Run(ctx context.Context, o Options) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Interval <= 0 {
		return fmt.Errorf("the write interval must be positive, not %v", o.Interval)
	}
	url := o.Ledger + "/api/ledger/entries"
	client := &http.Client{Timeout: writeTimeout, Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: writeTimeout}).DialContext,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     30 * time.Second,
	}}
	o.Log.Info("worker started", "fence", o.Identity.Fence, "holder", o.Identity.Holder, "ledger", o.Ledger)
	timer := time.NewTimer(0)
	defer timer.Stop()
	retry := retryMin
	for {
		wait := o.Interval
		if !writeOnce(context.WithoutCancel(ctx), client, url, o) {
			wait, retry = min(retry, o.Interval), min(retry*2, o.Interval)
		} else {
			retry = retryMin
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			o.Log.Info("worker stopped", "fence", o.Identity.Fence)
			return nil
		case <-timer.C:
		}
	}
}

// writeOnce sends one write and logs the ledger's answer; failures are logged, not fatal: the
// ledger may be restarting. It reports whether the ledger answered.
func writeOnce(ctx context.Context, client *http.Client, url string, o Options) bool {
	w := o.Identity
	w.WrittenAt = o.Now().UTC()
	body, _ := json.Marshal(w)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		o.Log.Error("write", "err", err)
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		o.Log.Warn("ledger unreachable", "fence", w.Fence, "err", err)
		return false
	}
	defer resp.Body.Close()
	var answer struct {
		Entry ledger.Entry `json:"entry"`
		Error string       `json:"error"`
	}
	json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(&answer)
	switch resp.StatusCode {
	case http.StatusCreated:
		o.Log.Info("write accepted", "fence", w.Fence, "seq", answer.Entry.Seq)
	case http.StatusConflict:
		o.Log.Warn("write rejected: stale fence", "fence", w.Fence, "highest", answer.Entry.Highest, "seq", answer.Entry.Seq)
	case http.StatusUnprocessableEntity:
		o.Log.Error("write rejected: the election has not issued this fence", "fence", w.Fence, "issued", answer.Entry.Issued, "seq", answer.Entry.Seq)
	default:
		o.Log.Warn("write failed", "fence", w.Fence, "status", resp.StatusCode, "error", answer.Error)
		return resp.StatusCode < http.StatusInternalServerError
	}
	return true
}
