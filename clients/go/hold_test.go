package swarmlease

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// holdStream keeps a watch stream open with one leader frame until the client leaves, so that
// a follower's watch neither ends nor spins.
func holdStream(w http.ResponseWriter, r *http.Request, leader string, term uint64) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, stateFrame(testRoom, leader, term))
	http.NewResponseController(w).Flush()
	<-r.Context().Done()
}

// TestHoldRetriesUntilLeader: Hold waits out a 429 and a 409 for their Retry-After, backs off
// from a 503, waits a follower's retry_after_ms, and then wins.
func TestHoldRetriesUntilLeader(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, n int, _ request) {
		switch {
		case r.URL.Path == watchPath:
			holdStream(w, r, "other", 3)
		case n == 1:
			writeError(w, http.StatusTooManyRequests, "rate_limited", 3*time.Second)
		case n == 2:
			writeError(w, http.StatusServiceUnavailable, "unavailable", 0)
		case n == 3:
			writeError(w, http.StatusConflict, "capacity_exceeded", 2*time.Second)
		case n == 4:
			writeJSON(w, http.StatusOK, followerBody(testRoom, "other", 3, 300*time.Millisecond))
		default:
			writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 4, 5*time.Second))
		}
	})
	var logs logBuffer
	el := s.client(t, WithLogger(logs.logger()))
	delays := recordSleeps(el)
	l, err := el.Hold(context.Background(), testRoom, CampaignRequest{CandidateID: "me", TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Resign(context.Background())
	if l.Fence() != 4 || l.RoomID() != testRoom || l.Leader().CandidateID != "me" || l.Cause() != nil {
		t.Fatalf("leadership: term %d, room %s, leader %+v, cause %v", l.Fence(), l.RoomID(), l.Leader(), l.Cause())
	}
	if d := delays(); len(d) != 3 || d[0] != 3*time.Second || d[1] != 5*time.Millisecond || d[2] != 2*time.Second {
		t.Fatalf("waits %v, want [3s (Retry-After) 5ms (back-off) 2s (Retry-After)]", d)
	}
	campaigns := s.on(campaignPath)
	if len(campaigns) != 5 {
		t.Fatalf("%d campaigns, want 5", len(campaigns))
	}
	if wait := campaigns[4].at.Sub(campaigns[3].at); wait < 300*time.Millisecond {
		t.Fatalf("the follower campaigned again after %v, before its retry_after_ms (300 ms)", wait)
	}
	for _, c := range campaigns {
		expectBody(t, c, map[string]any{"candidate_id": "me", "ttl_seconds": 5.0})
	}
	if !strings.Contains(logs.String(), "following") || !strings.Contains(logs.String(), "rate_limited") {
		t.Fatalf("the log misses the transitions:\n%s", logs.String())
	}
	noToken(t, "the log", logs.String())
}

// TestHoldRefuses: what retrying cannot change is returned at once — arguments before any
// request, and the server's permanent answers after one.
func TestHoldRefuses(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, _ int, req request) {
		if req.body["candidate_id"] == "agent/a" {
			writeError(w, http.StatusBadRequest, "invalid_input", 0)
		} else {
			writeError(w, http.StatusForbidden, "forbidden", 0)
		}
	})
	el := s.client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		req  CampaignRequest
		opts []HoldOption
		is   error
	}{
		{CampaignRequest{CandidateID: "a", TTL: 4 * time.Second}, nil, ErrInvalidTTL},
		{CampaignRequest{CandidateID: "a", TTL: 301 * time.Second}, nil, ErrInvalidTTL},
		{CampaignRequest{CandidateID: "a", TTL: 5500 * time.Millisecond}, nil, ErrInvalidTTL},
		// 1.67 s (a third of the TTL) + 3 s ≥ 5 s − 0.5 s.
		{CampaignRequest{CandidateID: "a", TTL: 5 * time.Second}, []HoldOption{WithStopBefore(3 * time.Second)}, nil},
		{CampaignRequest{CandidateID: "a", TTL: 5 * time.Second}, []HoldOption{WithRenewInterval(4500 * time.Millisecond)}, nil},
		{CampaignRequest{CandidateID: "a"}, []HoldOption{WithRenewInterval(0)}, nil},
	} {
		if _, err := el.Hold(ctx, testRoom, tc.req, tc.opts...); err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("Hold(%+v): %v, want an error (%v)", tc.req, err, tc.is)
		}
	}
	if _, err := el.Hold(ctx, "bad room", CampaignRequest{CandidateID: "a"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Hold in an invalid room: %v", err)
	}
	if n := len(s.requests()); n != 0 {
		t.Fatalf("%d requests for invalid arguments", n)
	}
	if _, err := el.Hold(ctx, testRoom, CampaignRequest{CandidateID: "agent/a"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Hold with a candidate the server refuses: %v", err)
	}
	if _, err := el.Hold(ctx, testRoom, CampaignRequest{CandidateID: "a"}); !errors.Is(err, ErrForbidden) {
		t.Errorf("Hold on a server with elections disabled: %v", err)
	}
	if n := len(s.requests()); n != 2 {
		t.Fatalf("%d requests, want one per permanent answer", n)
	}
}

// TestHoldRenewsThenResigns: the leader renews with its token and TTL, each success moves the
// deadline, and Resign ends the term, stops the renewals and hands the term back.
func TestHoldRenewsThenResigns(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, _ int, _ request) {
		switch r.URL.Path {
		case campaignPath, renewPath:
			writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 9, 5*time.Second))
		case resignPath:
			writeJSON(w, http.StatusOK, map[string]any{"election_id": testRoom, "status": "vacant", "previous_term": 9})
		}
	})
	var logs logBuffer
	el := s.client(t, WithLogger(logs.logger()))
	l, err := el.Hold(context.Background(), testRoom, CampaignRequest{CandidateID: "me", TTL: 5 * time.Second},
		WithRenewInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	first := l.Deadline()
	if until := time.Until(first); until > 4500*time.Millisecond || until < 4*time.Second {
		t.Fatalf("deadline in %v, want just under TTL − margin (4.5 s)", until)
	}
	poll(t, "three renewals", func() bool { return len(s.on(renewPath)) >= 3 })
	if !l.Deadline().After(first) {
		t.Fatal("renewals did not move the deadline")
	}
	prev, err := l.Resign(context.Background())
	if err != nil || prev != 9 {
		t.Fatalf("resign: %d, %v", prev, err)
	}
	select {
	case <-l.Done():
	default:
		t.Fatal("the term did not end on Resign")
	}
	if !errors.Is(l.Cause(), ErrResigned) {
		t.Fatalf("cause %v, want ErrResigned", l.Cause())
	}
	renewals := len(s.on(renewPath))
	if again, err := l.Resign(context.Background()); again != 9 || err != nil || len(s.on(resignPath)) != 1 {
		t.Fatalf("a second Resign: %d, %v, %d requests", again, err, len(s.on(resignPath)))
	}
	for _, r := range s.on(renewPath) {
		expectBody(t, r, map[string]any{"leader_token": testToken, "ttl_seconds": 5.0})
	}
	expectBody(t, s.on(resignPath)[0], map[string]any{"leader_token": testToken})
	// The renewal loop has returned (Resign waited for it): nothing renews after the resignation.
	if last := s.on(renewPath)[renewals-1]; last.at.After(s.on(resignPath)[0].at) {
		t.Fatal("a renewal after the resignation")
	}
	noToken(t, "the log", logs.String())
}

// TestHoldLost: a renewal answered lease_not_current ends the term with ErrLost, telling
// another holder (400) from an expired lease (404); there is nothing to resign then.
func TestHoldLost(t *testing.T) {
	for _, tc := range []struct {
		status int
		is     error
		not    error
	}{
		{http.StatusBadRequest, ErrHeldByOther, ErrVacant},
		{http.StatusNotFound, ErrVacant, ErrHeldByOther},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			s := newScript(t, func(w http.ResponseWriter, r *http.Request, n int, _ request) {
				switch {
				case r.URL.Path == campaignPath:
					writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 2, 5*time.Second))
				case r.URL.Path == renewPath && n == 1:
					writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 2, 5*time.Second))
				default:
					writeError(w, tc.status, "lease_not_current", 0)
				}
			})
			l, err := s.client(t).Hold(context.Background(), testRoom, CampaignRequest{CandidateID: "me", TTL: 5 * time.Second},
				WithRenewInterval(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-l.Done():
			case <-time.After(waitFor):
				t.Fatal("the term did not end")
			}
			cause := l.Cause()
			if !errors.Is(cause, ErrLost) || !errors.Is(cause, ErrLeaseNotCurrent) || !errors.Is(cause, tc.is) || errors.Is(cause, tc.not) {
				t.Fatalf("cause %v", cause)
			}
			noToken(t, "the cause", cause.Error())
			if prev, err := l.Resign(context.Background()); prev != 0 || err != nil || len(s.on(resignPath)) != 0 {
				t.Fatalf("Resign after the loss: %d, %v, %d requests", prev, err, len(s.on(resignPath)))
			}
		})
	}
}

// TestHoldLostOnForeignRenewal: a renewal answered with another term (or as a follower) is not
// this term's: the term ends as lost at once.
func TestHoldLostOnForeignRenewal(t *testing.T) {
	for name, answer := range map[string]map[string]any{
		"another term": leaderBody(testRoom, "me", 3, 5*time.Second),
		"follower":     followerBody(testRoom, "other", 3, 5*time.Second),
	} {
		t.Run(name, func(t *testing.T) {
			s := newScript(t, func(w http.ResponseWriter, r *http.Request, _ int, _ request) {
				if r.URL.Path == campaignPath {
					writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 2, 5*time.Second))
					return
				}
				writeJSON(w, http.StatusOK, answer)
			})
			l, err := s.client(t).Hold(context.Background(), testRoom, CampaignRequest{CandidateID: "me", TTL: 5 * time.Second},
				WithRenewInterval(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-l.Done():
			case <-time.After(waitFor):
				t.Fatal("the term did not end")
			}
			if !errors.Is(l.Cause(), ErrLost) {
				t.Fatalf("cause %v, want ErrLost", l.Cause())
			}
		})
	}
}

// TestHoldDeadlineFromRequestStart: the safety deadline runs from the start of the last
// request that succeeded, not from its answer. A renewal the server answers 2 s late still
// moves the deadline to its start + TTL − margin; when the following renewals fail, the term
// ends that long after the slow request arrived at the server (the client sent it no later),
// minus the stop time.
func TestHoldDeadlineFromRequestStart(t *testing.T) {
	t.Parallel()
	const (
		ttl        = 5 * time.Second
		margin     = 500 * time.Millisecond // SafetyMargin(5 s)
		stopBefore = 300 * time.Millisecond
		slow       = 2 * time.Second
	)
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, n int, _ request) {
		switch {
		case r.URL.Path == campaignPath:
			writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 5, ttl))
		case r.URL.Path == renewPath && n == 1:
			select {
			case <-time.After(slow): // a slow server, not synchronisation
			case <-r.Context().Done():
				return
			}
			writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 5, ttl))
		default:
			writeError(w, http.StatusServiceUnavailable, "unavailable", 0)
		}
	})
	var logs logBuffer
	l, err := s.client(t, WithLogger(logs.logger())).Hold(context.Background(), testRoom, CampaignRequest{CandidateID: "me", TTL: ttl},
		WithRenewInterval(time.Second), WithStopBefore(stopBefore))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-time.After(3 * ttl):
		t.Fatal("the term did not end")
	}
	ended := time.Now()
	if !errors.Is(l.Cause(), ErrDeadline) {
		t.Fatalf("cause %v, want ErrDeadline", l.Cause())
	}
	campaign, slowRenewal := s.on(campaignPath)[0].at, s.on(renewPath)[0].at
	latest := slowRenewal.Add(ttl - margin - stopBefore) // the request started before it arrived
	t.Logf("campaign at 0, slow renewal arrived at %v, answered at %v; term ended at %v (bound %v)",
		slowRenewal.Sub(campaign).Round(time.Millisecond), (slowRenewal.Sub(campaign) + slow).Round(time.Millisecond),
		ended.Sub(campaign).Round(time.Millisecond), latest.Sub(campaign).Round(time.Millisecond))
	if ended.After(latest.Add(100 * time.Millisecond)) {
		t.Fatalf("the term ended %v after the slow renewal arrived: the deadline ran from its answer, not its start", ended.Sub(slowRenewal))
	}
	if ended.Before(campaign.Add(ttl - margin - stopBefore + 500*time.Millisecond)) {
		t.Fatalf("the term ended %v after the campaign: the slow renewal did not count", ended.Sub(campaign))
	}
	if d := l.Deadline(); d.After(slowRenewal.Add(ttl-margin)) || d.Before(slowRenewal.Add(ttl-margin-100*time.Millisecond)) {
		t.Fatalf("deadline %v after the slow renewal arrived, want just under %v", d.Sub(slowRenewal), ttl-margin)
	}
	if !strings.Contains(logs.String(), "renewal failed") {
		t.Fatalf("the failing renewals were not logged:\n%s", logs.String())
	}
	noToken(t, "the log", logs.String())
}

// TestHoldFollowerWakesOnVacancy: a follower told to retry in a minute campaigns as soon as
// the room's watch stream shows it vacant.
func TestHoldFollowerWakesOnVacancy(t *testing.T) {
	vacate := make(chan struct{})
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, n int, _ request) {
		switch {
		case r.URL.Path == watchPath:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, stateFrame(testRoom, "other", 3))
			http.NewResponseController(w).Flush()
			select {
			case <-vacate:
				fmt.Fprint(w, stateFrame(testRoom, "", 0))
				http.NewResponseController(w).Flush()
			case <-r.Context().Done():
				return
			}
			<-r.Context().Done()
		case n == 1:
			writeJSON(w, http.StatusOK, followerBody(testRoom, "other", 3, time.Minute))
		default:
			writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 4, 5*time.Second))
		}
	})
	el := s.client(t)
	type result struct {
		l   *Leadership
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := el.Hold(context.Background(), testRoom, CampaignRequest{CandidateID: "me", TTL: 5 * time.Second})
		done <- result{l, err}
	}()
	poll(t, "the follower's watch", func() bool { return len(s.on(watchPath)) == 1 })
	vacated := time.Now()
	close(vacate)
	var res result
	select {
	case res = <-done:
	case <-time.After(waitFor):
		t.Fatal("Hold did not win after the room became vacant")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	defer res.l.Resign(context.Background())
	t.Logf("room vacant → won in %v", time.Since(vacated).Round(time.Millisecond))
	if res.l.Fence() != 4 || len(s.on(campaignPath)) != 2 {
		t.Fatalf("term %d after %d campaigns", res.l.Fence(), len(s.on(campaignPath)))
	}
}

// TestHoldCancelled: Hold returns ctx's error when ctx ends while it follows, and a term ends
// with ctx's cause when ctx ends while it leads.
func TestHoldCancelled(t *testing.T) {
	var leaderNext atomic.Bool
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, _ int, _ request) {
		switch {
		case r.URL.Path == watchPath:
			holdStream(w, r, "other", 3)
		case leaderNext.Load():
			writeJSON(w, http.StatusOK, leaderBody(testRoom, "me", 4, 5*time.Second))
		default:
			writeJSON(w, http.StatusOK, followerBody(testRoom, "other", 3, time.Minute))
		}
	})
	el := s.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the follower watches the room (bounded: the test's own wait).
		for deadline := time.Now().Add(waitFor); len(s.on(watchPath)) == 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond) // poll interval
		}
		cancel()
	}()
	if _, err := el.Hold(ctx, testRoom, CampaignRequest{CandidateID: "me", TTL: 5 * time.Second}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Hold after cancel: %v", err)
	}

	leaderNext.Store(true)
	ctx, cancel = context.WithCancel(context.Background())
	l, err := el.Hold(ctx, testRoom, CampaignRequest{CandidateID: "me", TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-l.Done()
	if !errors.Is(l.Cause(), context.Canceled) {
		t.Fatalf("cause %v, want context.Canceled", l.Cause())
	}
}

// TestLeadershipRedacted: printing or logging a Leadership shows the room, term and deadline,
// never the token held in its unexported fields.
func TestLeadershipRedacted(t *testing.T) {
	const secret = "SECRET-TOKEN-VALUE-0123456789abcdefghijklmnop"
	l := &Leadership{room: testRoom, fence: 42, token: LeaderToken(secret), deadline: time.Now()}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("term", "leadership", l)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("term", "leadership", l)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s %q", l, l, l, l, l), logs.String()} {
		if strings.Contains(out, secret) {
			t.Fatalf("the token leaks: %s", out)
		}
		if !strings.Contains(out, "42") {
			t.Fatalf("the term is missing: %s", out)
		}
	}
}

// TestNewRoomContenderTimingError: the constructor refuses a renew interval plus stop time that does
// not fit in the TTL minus its margin with a *TimingError carrying the durations (the default
// renew interval filled in), before any request.
func TestNewRoomContenderTimingError(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ request) {
		writeError(w, http.StatusForbidden, "forbidden", 0)
	})
	el := s.client(t)
	_, err := el.NewRoomContender(testRoom, CampaignRequest{CandidateID: "a", TTL: 5 * time.Second}, WithStopBefore(3*time.Second))
	var te *TimingError
	if !errors.As(err, &te) || !errors.Is(err, ErrInvalidTiming) {
		t.Fatalf("NewRoomContender: %v, want a *TimingError", err)
	}
	if te.TTL != 5*time.Second || te.Window != 4500*time.Millisecond || te.RenewInterval != 5*time.Second/3 || te.StopBefore != 3*time.Second {
		t.Fatalf("%+v", te)
	}
	if n := len(s.requests()); n != 0 {
		t.Fatalf("%d requests for an invalid timing", n)
	}
}
