package swarmlease

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The observer and the room watch share one loop (streamWatch) and differ only in their
// policies. These tests cover each side where the other side's tests cover the loop, so that
// every policy is pinned on the endpoint that has it.

// TestWatchRetriesEveryAnswer: unlike a room watch, the observer retries an answer that would
// be permanent for a room (a 404 from a proxy in front of a starting replica, say).
func TestWatchRetriesEveryAnswer(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) <= 2 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvent(w, "current", free(1))
		<-r.Context().Done()
	}))
	defer stopServer(srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := collect(ctx, Connect(srv.URL, fast()...))
	expectState(t, ch, free(1))
	if n := requests.Load(); n != 3 {
		t.Fatalf("%d requests, want 3 (two 404s retried)", n)
	}
}

// TestWatchRoomIdleTimeoutReconnects: a room stream that goes silent is dropped after the idle
// timeout; the snapshot of the next stream, already yielded, yields nothing.
func TestWatchRoomIdleTimeoutReconnects(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, n int, _ request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			fmt.Fprint(w, stateFrame(testRoom, "a", 1))
		} else {
			fmt.Fprint(w, stateFrame(testRoom, "a", 1)+stateFrame(testRoom, "b", 2))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done() // silent from here on: no keep-alives
	})
	el := s.client(t, WithIdleTimeout(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var got []string
	for st, err := range el.WatchRoom(ctx, testRoom) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s/%d", st.Leader.CandidateID, st.Leader.Term))
		if len(got) == 2 {
			break
		}
	}
	if want := "a/1,b/2"; strings.Join(got, ",") != want {
		t.Fatalf("states %q, want %q", got, want)
	}
	if n := len(s.on(watchPath)); n != 2 {
		t.Fatalf("%d streams, want 2 (one reconnect after the idle timeout)", n)
	}
}

// TestWatchRoomAcceptedButNeverAnswered: a request the server holds without answering ends
// at the initial timeout, saying that no response came.
func TestWatchRoomAcceptedButNeverAnswered(t *testing.T) {
	s := newScript(t, func(_ http.ResponseWriter, r *http.Request, _ int, _ request) { <-r.Context().Done() })
	el := s.client(t, WithInitialTimeout(200*time.Millisecond))
	var last error
	for _, err := range el.WatchRoom(context.Background(), testRoom) {
		last = err
	}
	if !errors.Is(last, ErrInitialTimeout) || !strings.Contains(last.Error(), "no response") {
		t.Fatalf("last value %v, want ErrInitialTimeout (no response)", last)
	}
}
