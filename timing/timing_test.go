package timing_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// TestSafetyMargin: a tenth of the TTL, at most two seconds.
func TestSafetyMargin(t *testing.T) {
	for ttl, want := range map[time.Duration]time.Duration{
		time.Second: 100 * time.Millisecond, 5 * time.Second: 500 * time.Millisecond,
		20 * time.Second: 2 * time.Second, 300 * time.Second: 2 * time.Second,
	} {
		if got := timing.SafetyMargin(ttl); got != want || timing.Window(ttl) != ttl-want {
			t.Errorf("SafetyMargin(%v) = %v, Window %v; want %v", ttl, got, timing.Window(ttl), want)
		}
	}
}

// TestCheck: the renew interval plus the stop time must be below the window; the intervals must
// be positive (the stop time not negative), the poll interval only where one is given.
func TestCheck(t *testing.T) {
	ttl := 3 * time.Second // window 2.7 s
	if err := timing.Check(ttl, time.Second, 1699*time.Millisecond, time.Second); err != nil {
		t.Errorf("1 s + 1.699 s < 2.7 s refused: %v", err)
	}
	if err := timing.Check(ttl, time.Second, 0); err != nil {
		t.Errorf("no poll interval: %v", err)
	}
	for _, tc := range []struct {
		name              string
		renew, stop, poll time.Duration
		withPoll          bool
		notPositive       []string
	}{
		{"stop plus renew", time.Second, 1700 * time.Millisecond, 0, false, nil},
		{"renew alone", 2700 * time.Millisecond, 0, time.Second, true, nil},
		{"negative renew", -time.Second, 0, 0, false, []string{"RenewInterval"}},
		{"negative stop and poll", time.Second, -1, -1, true, []string{"PollInterval", "StopBefore"}},
	} {
		var poll []time.Duration
		if tc.withPoll {
			poll = append(poll, tc.poll)
		}
		err := timing.Check(ttl, tc.renew, tc.stop, poll...)
		var te *timing.Error
		if !errors.As(err, &te) || !errors.Is(err, timing.ErrInvalid) {
			t.Errorf("%s: err = %v, want an *Error", tc.name, err)
			continue
		}
		if te.TTL != ttl || te.Window != 2700*time.Millisecond || te.RenewInterval != tc.renew || te.StopBefore != tc.stop || !slices.Equal(te.NotPositive, tc.notPositive) {
			t.Errorf("%s: %+v", tc.name, te)
		}
	}
}

// TestClockSkew: the default scales down with short TTLs; an allowance at or above the TTL is
// refused.
func TestClockSkew(t *testing.T) {
	for ttl, want := range map[time.Duration]time.Duration{
		time.Second: 100 * time.Millisecond, 5 * time.Second: 500 * time.Millisecond, 30 * time.Second: time.Second,
	} {
		if got := timing.DefaultMaxClockSkewFor(ttl); got != want || timing.CheckClockSkew(ttl, got) != nil {
			t.Errorf("DefaultMaxClockSkewFor(%v) = %v, want %v", ttl, got, want)
		}
	}
	for _, skew := range []time.Duration{-1, time.Second, 2 * time.Second} {
		if timing.CheckClockSkew(time.Second, skew) == nil {
			t.Errorf("skew %v with TTL 1 s accepted", skew)
		}
	}
}

// TestSleep: a pause ends with its duration, a wake-up or its context; only the context's end
// is an error.
func TestSleep(t *testing.T) {
	if err := timing.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("a 1 ms sleep: %v", err)
	}
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	if err := timing.SleepOrWake(context.Background(), time.Hour, wake); err != nil {
		t.Errorf("a woken sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := timing.SleepOrWake(ctx, time.Hour, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a sleep whose context ended = %v, want context.Canceled", err)
	}
}
