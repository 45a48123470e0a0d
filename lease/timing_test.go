package lease_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// TestNewContenderAppliesTheTimingRule: the constructor fills the defaults and refuses, with a
// *TimingError carrying the durations, every contender whose renewals and stop time do not fit in
// the TTL minus its safety margin — before anything contends.
func TestNewContenderAppliesTheTimingRule(t *testing.T) {
	e, err := lease.New(memstore.New(), "jobs", lease.Identity{HolderID: "a"}, lease.WithTTL(3*time.Second), lease.WithMaxClockSkew(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	c, err := lease.NewContender(lease.Contender{Election: e})
	if err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	if c.RenewInterval != time.Second || c.PollInterval != time.Second || c.Logger == nil {
		t.Fatalf("defaults not filled: renew %v, poll %v, logger %v", c.RenewInterval, c.PollInterval, c.Logger)
	}
	// TTL 3 s: the window is 2.7 s.
	for _, tc := range []struct {
		name        string
		c           lease.Contender
		notPositive []string
	}{
		{"stop plus default renew", lease.Contender{Election: e, StopBefore: 1700 * time.Millisecond}, nil},
		{"renew alone", lease.Contender{Election: e, RenewInterval: 2700 * time.Millisecond}, nil},
		{"negative renew", lease.Contender{Election: e, RenewInterval: -time.Second}, []string{"RenewInterval"}},
		{"negative stop and poll", lease.Contender{Election: e, StopBefore: -1, PollInterval: -1}, []string{"PollInterval", "StopBefore"}},
	} {
		_, err := lease.NewContender(tc.c)
		var te *lease.TimingError
		if !errors.As(err, &te) || !errors.Is(err, lease.ErrInvalidTiming) {
			t.Errorf("%s: err = %v, want a *TimingError", tc.name, err)
			continue
		}
		if te.TTL != 3*time.Second || te.Window != 2700*time.Millisecond || !slices.Equal(te.NotPositive, tc.notPositive) {
			t.Errorf("%s: %+v", tc.name, te)
		}
	}
	if _, err := lease.NewContender(lease.Contender{Election: e, StopBefore: 1699 * time.Millisecond}); err != nil {
		t.Errorf("1.699 s + 1 s < 2.7 s refused: %v", err)
	}
	if _, err := lease.NewContender(lease.Contender{}); err == nil {
		t.Error("a contender without an election accepted")
	}
}
