package oneshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// world is one memory store shared by any number of contenders, on one fake clock.
type world struct {
	t     *testing.T
	store lease.Store
	clock *leasetest.FakeClock
}

func newWorld(t *testing.T) *world {
	return &world{t: t, store: memstore.New(), clock: leasetest.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))}
}

// options are the options of a command run by holder, printing into fresh buffers.
func (w *world) options(holder string, json bool) (Options, *bytes.Buffer, *bytes.Buffer) {
	var out, errBuf bytes.Buffer
	cfg := &config.Config{Namespace: "jobs", Identity: lease.Identity{HolderID: holder}, TTL: 10 * time.Second, MaxClockSkew: time.Second}
	return Options{
		IO: cmdutil.IOStreams{Out: &out, Err: &errBuf}, JSON: json, Now: w.clock.Now,
		Open: func() (*cmdutil.Session, error) {
			e, err := lease.New(w.store, cfg.Namespace, cfg.Identity, lease.WithTTL(cfg.TTL), lease.WithMaxClockSkew(cfg.MaxClockSkew), lease.WithClock(w.clock))
			if err != nil {
				return nil, err
			}
			return &cmdutil.Session{Config: cfg, Election: e, Store: w.store, Close: func() {}}, nil
		},
	}, &out, &errBuf
}

// exitCode is the code the root gives err.
func exitCode(err error) int {
	code, _ := cmdutil.Classify(err)
	return code
}

// TestTryAcquireHeldAndAcquired: the fence goes to stdout and status to stderr; a lease held by
// another exits 75 and says until when — its expiry plus the skew allowance — naming the store.
func TestTryAcquireHeldAndAcquired(t *testing.T) {
	w := newWorld(t)
	a, out, _ := w.options("alice", false)
	if err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: a}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) == "" {
		t.Fatal("no fence on stdout")
	}
	b, outB, errB := w.options("bob", false)
	err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: b})
	if exitCode(err) != cmdutil.ExitHeld || outB.Len() != 0 {
		t.Fatalf("bob: exit %d (%v), stdout %q; want 75 and nothing", exitCode(err), err, outB.String())
	}
	for _, want := range []string{`held by "alice"`, "until 2026-12-01T12:00:11Z", "its expiry 2026-12-01T12:00:10Z plus max_clock_skew_ms 1000", "memory store"} {
		if !strings.Contains(errB.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, errB.String())
		}
	}
}

// TestTryAcquireWait: --wait retries until the lease is won — here once alice's lease has
// expired and the skew allowance passed — or until the duration passes, then exits 75; the
// waits are the fake clock's, bounded by the holder's expiry.
func TestTryAcquireWait(t *testing.T) {
	w := newWorld(t)
	a, _, _ := w.options("alice", false)
	if err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: a}); err != nil {
		t.Fatal(err)
	}
	var slept time.Duration
	sleep := func(_ context.Context, d time.Duration, _ <-chan struct{}) error {
		if d <= 0 {
			t.Fatalf("a wait of %v", d)
		}
		slept += d
		w.clock.Advance(d)
		return nil
	}
	b, outB, errB := w.options("bob", true)
	err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: b, Wait: 5 * time.Second, Poll: time.Second, Sleep: sleep})
	if exitCode(err) != cmdutil.ExitHeld || slept != 5*time.Second {
		t.Fatalf("--wait 5s on a lease held 11 s more: exit %d (%v) after %v; want 75 after 5s\n%s", exitCode(err), err, slept, errB.String())
	}
	var held tryAcquireJSON
	if err := json.Unmarshal(outB.Bytes(), &held); err != nil || held.Acquired || held.Current.HolderID != "alice" || !held.Current.Acquired ||
		held.AvailableAt == nil || !held.AvailableAt.Equal(time.Date(2026, 12, 1, 12, 0, 11, 0, time.UTC)) {
		t.Fatalf("bob's JSON: %+v, %v\n%s", held, err, outB.String())
	}

	slept = 0
	c, outC, _ := w.options("carol", true)
	if err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: c, Wait: time.Minute, Poll: time.Second, Sleep: sleep}); err != nil {
		t.Fatalf("--wait 1m: %v", err)
	}
	var got tryAcquireJSON
	if err := json.Unmarshal(outC.Bytes(), &got); err != nil || !got.Acquired || got.Grant == nil || got.Grant.HolderID != "carol" {
		t.Fatalf("carol: %+v, %v\n%s", got, err, outC.String())
	}
	// 6 s of the lease were left, plus the 1 s skew allowance.
	if slept < 6*time.Second || slept > 7*time.Second+10*time.Millisecond {
		t.Fatalf("carol waited %v, want about 7 s", slept)
	}
}

// TestTryAcquireWaitAfterAnUnsettledWrite: when a write of the attempt may have landed but
// another contender holds the lease by the retry's read, --wait goes on waiting for that holder
// (without --wait it would exit 8, outcome unknown).
func TestTryAcquireWaitAfterAnUnsettledWrite(t *testing.T) {
	w := newWorld(t)
	unsettled := &leasetest.UnsettledStore{Store: w.store}
	w.store = unsettled
	a, _, _ := w.options("alice", false)
	if err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: a}); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(11 * time.Second) // alice's lease and the skew allowance have run out
	c, _, _ := w.options("carol", false)
	// Bob's acquisition lands, runs out, and carol takes over before bob reads it back.
	unsettled.Arm(leasetest.LandsAtOnce, func() {
		w.clock.Advance(12 * time.Second)
		if err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: c}); err != nil {
			t.Errorf("carol: %v", err)
		}
	}, false)
	sleep := func(_ context.Context, d time.Duration, _ <-chan struct{}) error {
		w.clock.Advance(d)
		return nil
	}
	b, outB, errB := w.options("bob", true)
	if err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: b, Wait: time.Minute, Poll: time.Second, Sleep: sleep}); err != nil {
		t.Fatalf("--wait 1m: exit %d (%v); want 0 once carol's lease ran out\n%s", exitCode(err), err, errB.String())
	}
	var got tryAcquireJSON
	if err := json.Unmarshal(outB.Bytes(), &got); err != nil || !got.Acquired || got.Grant == nil || got.Grant.HolderID != "bob" {
		t.Fatalf("bob: %+v, %v\n%s", got, err, outB.String())
	}
}

// TestInspectState: inspect's JSON carries the state its text shows: vacant before anything,
// held, expired once the lease ran out.
func TestInspectState(t *testing.T) {
	w := newWorld(t)
	state := func() string {
		t.Helper()
		o, out, _ := w.options(observerHolderID, true)
		if err := inspectRun(context.Background(), &o); err != nil {
			t.Fatal(err)
		}
		var got snapshotJSON
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		o.JSON = false
		text := &bytes.Buffer{}
		o.IO.Out = text
		if err := inspectRun(context.Background(), &o); err != nil {
			t.Fatal(err)
		}
		if got.Exists && !strings.Contains(text.String(), "state      "+got.Status+"\n") {
			t.Fatalf("text %q does not show state %q", text.String(), got.Status)
		}
		if got.Store == "" {
			t.Fatal("no store in the JSON")
		}
		return got.Status
	}
	if s := state(); s != stateVacant {
		t.Fatalf("before anything: %q", s)
	}
	a, _, _ := w.options("alice", false)
	if err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: a}); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != stateHeld {
		t.Fatalf("held: %q", s)
	}
	w.clock.Advance(12 * time.Second)
	if s := state(); s != stateExpired {
		t.Fatalf("after the TTL and skew: %q", s)
	}
}

// TestRenewReleaseAndNotHolder: renew keeps the fence; release and renew by an identity that
// does not hold the fence exit 3; the outputs name the store.
func TestRenewReleaseAndNotHolder(t *testing.T) {
	w := newWorld(t)
	a, out, _ := w.options("alice", true)
	if err := tryAcquireRun(context.Background(), &TryAcquireOptions{Options: a}); err != nil {
		t.Fatal(err)
	}
	var won tryAcquireJSON
	if err := json.Unmarshal(out.Bytes(), &won); err != nil {
		t.Fatal(err)
	}
	fence := won.Grant.Fence
	b, _, _ := w.options("bob", false)
	if err := renewRun(context.Background(), &FenceOptions{Options: b, Fence: fence}); exitCode(err) != cmdutil.ExitNotHolder {
		t.Fatalf("bob renews alice's fence: exit %d (%v)", exitCode(err), err)
	}
	a2, out2, _ := w.options("alice", false)
	if err := renewRun(context.Background(), &FenceOptions{Options: a2, Fence: fence}); err != nil || strings.TrimSpace(out2.String()) == "" {
		t.Fatalf("alice renews: %v, %q", err, out2.String())
	}
	a3, _, errA3 := w.options("alice", false)
	if err := releaseRun(context.Background(), &FenceOptions{Options: a3, Fence: fence}); err != nil || !strings.Contains(errA3.String(), "memory store") {
		t.Fatalf("alice releases: %v, %q", err, errA3.String())
	}
	if err := releaseRun(context.Background(), &FenceOptions{Options: b, Fence: fence}); exitCode(err) != cmdutil.ExitNotHolder {
		t.Fatalf("bob releases: exit %d (%v)", exitCode(err), err)
	}
}

// TestParseFence: FENCE must be one positive whole number (exit 2 otherwise).
func TestParseFence(t *testing.T) {
	for _, args := range [][]string{nil, {"1", "2"}, {"0"}, {"-3"}, {"abc"}} {
		if _, err := parseFence(args); exitCode(err) != cmdutil.ExitUsage {
			t.Errorf("%q: exit %d (%v)", args, exitCode(err), err)
		}
	}
	if f, err := parseFence([]string{"42"}); err != nil || f != 42 {
		t.Errorf("42: %d, %v", f, err)
	}
}

// TestCommandsParse: the commands bind their flags and arguments into the options; read-only
// commands open the election with no holder identity, and --store memory is refused for them
// all before any store is opened.
func TestCommandsParse(t *testing.T) {
	var errBuf bytes.Buffer
	f := &cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: &bytes.Buffer{}, Err: &errBuf},
		Environ:  func() []string { return []string{"SWARM_LEASE_NAMESPACE=jobs"} },
		Hostname: func() string { return "host-a" },
		Discover: func(context.Context, string) (config.Task, error) { return config.Task{}, errors.New("not in a task") }}
	var gotWait time.Duration
	cmd := NewCmdTryAcquire(f, func(_ context.Context, o *TryAcquireOptions) error { gotWait = o.Wait; return nil })
	cmd.SetArgs([]string{"--wait", "90s"})
	if err := cmd.Execute(); err != nil || gotWait != 90*time.Second {
		t.Fatalf("try-acquire --wait 90s: %v, wait %v", err, gotWait)
	}
	cmd = NewCmdTryAcquire(f, nil)
	cmd.SetArgs([]string{"--wait", "-1s"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); exitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("--wait -1s: exit %d (%v)", exitCode(err), err)
	}
	var gotFence uint64
	cmd = NewCmdRelease(f, func(_ context.Context, o *FenceOptions) error { gotFence = o.Fence; return nil })
	cmd.SetArgs([]string{"17"})
	if err := cmd.Execute(); err != nil || gotFence != 17 {
		t.Fatalf("release 17: %v, fence %d", err, gotFence)
	}

	// Read-only commands need no holder identity; the memory store is refused by name.
	inspect := func(store string) (*cmdutil.Session, error) {
		var s *cmdutil.Session
		cmd := NewCmdInspect(f, func(_ context.Context, o *Options) error {
			var err error
			s, err = o.Open()
			return err
		})
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		cmd.SetArgs([]string{"--store", store})
		return s, cmd.Execute()
	}
	s, err := inspect("file://" + t.TempDir())
	if err != nil || s.Election.Identity().HolderID != observerHolderID {
		t.Fatalf("inspect without a holder ID: %v", err)
	}
	s.Close()
	if _, err := inspect("memory"); exitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "invalid store memory (from flag --store) for inspect") {
		t.Fatalf("inspect --store memory: exit %d (%v)", exitCode(err), err)
	}
}

// TestJSONFieldNamesAgree: every one-shot command's JSON names its election and store with the
// same fields, and every election state in them — inspect's and init's object, renew's, and
// try-acquire's grant and current — has exactly the fields of cmdutil.StateJSON.
func TestJSONFieldNamesAgree(t *testing.T) {
	w := newWorld(t)
	stateKeys := keysOf(t, cmdutil.StateJSON{})
	objects := map[string]map[string]any{}
	run := func(name string, fn func(Options) error) {
		o, out, _ := w.options("alice", true)
		if err := fn(o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out.String())
		}
		objects[name] = v
	}
	ctx := context.Background()
	run("init", func(o Options) error { return initRun(ctx, &o) })
	run("try-acquire", func(o Options) error { return tryAcquireRun(ctx, &TryAcquireOptions{Options: o}) })
	fence := uint64(objects["try-acquire"]["grant"].(map[string]any)["fence"].(float64))
	run("inspect", func(o Options) error { return inspectRun(ctx, &o) })
	run("renew", func(o Options) error { return renewRun(ctx, &FenceOptions{Options: o, Fence: fence}) })
	run("release", func(o Options) error { return releaseRun(ctx, &FenceOptions{Options: o, Fence: fence}) })
	run("destroy", func(o Options) error { return destroyRun(ctx, &o) })

	for name, v := range objects {
		if v["namespace"] != "jobs" || !strings.Contains(fmt.Sprint(v["store"]), "memory") {
			t.Errorf("%s: namespace %v, store %v", name, v["namespace"], v["store"])
		}
	}
	states := map[string]any{"init": objects["init"], "inspect": objects["inspect"], "renew": objects["renew"],
		"try-acquire grant": objects["try-acquire"]["grant"], "try-acquire current": objects["try-acquire"]["current"]}
	for name, s := range states {
		keys := keysOf(t, s)
		for _, k := range stateKeys {
			if !slices.Contains(keys, k) {
				t.Errorf("%s lacks the state field %q: %v", name, k, keys)
			}
		}
	}
	for _, name := range []string{"init", "inspect", "renew"} {
		if objects[name]["state"] == nil {
			t.Errorf("%s: no state (held/expired/vacant)", name)
		}
	}
}

// keysOf returns the top-level field names of v's JSON object, sorted.
func keysOf(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	var m map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(m))
}
