package swarmlease

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestBackoffBoundsAndGrowth(t *testing.T) {
	const lo, hi = 100 * ms, 1000 * ms
	for _, tc := range []struct {
		name   string
		jitter float64
		want   []time.Duration
	}{
		// The floor never moves: no jitter means every wait is min.
		{"lowest", 0, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms}},
		// The ceiling doubles (200, 400, 800 ms) up to max.
		{"middle", 0.5, []time.Duration{150 * ms, 250 * ms, 450 * ms, 550 * ms, 550 * ms}},
		{"highest", 0.999999, []time.Duration{200 * ms, 400 * ms, 800 * ms, 1000 * ms, 1000 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := backoff{min: lo, max: hi, jitter: func() float64 { return tc.jitter }}
			var got []time.Duration
			for range tc.want {
				got = append(got, b.next().Round(ms))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("waits %v, want %v", got, tc.want)
			}
			b.reset()
			if d := b.next().Round(ms); d != tc.want[0] {
				t.Fatalf("after reset: %v, want %v", d, tc.want[0])
			}
		})
	}

	t.Run("random jitter stays within bounds", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		b := backoff{min: lo, max: hi, jitter: r.Float64}
		for i := range 1000 {
			if i%50 == 0 {
				b.reset()
			}
			if d := b.next(); d < lo || d > hi {
				t.Fatalf("wait %d: %v outside [%v, %v]", i, d, lo, hi)
			}
		}
	})

	t.Run("no overflow after a long outage", func(t *testing.T) {
		b := backoff{min: DefaultMinBackoff, max: DefaultMaxBackoff, jitter: func() float64 { return 0.999999 }}
		for range 10000 {
			if d := b.next(); d < DefaultMinBackoff || d > DefaultMaxBackoff {
				t.Fatalf("wait %v outside the bounds", d)
			}
		}
	})

	t.Run("a broken jitter source keeps the bounds", func(t *testing.T) {
		for _, j := range []float64{-1, 1, 7} {
			b := backoff{min: lo, max: hi, jitter: func() float64 { return j }}
			if d := b.next(); d != lo {
				t.Fatalf("jitter %v: wait %v, want %v", j, d, lo)
			}
		}
	})
}

// TestBackoffInTheObserver: through the observer's own loop, the waits grow while the server
// fails and start again from min after a connection that delivered a state.
func TestBackoffInTheObserver(t *testing.T) {
	// The server's script, one entry per request: fail, or stream one state.
	script := []State{{}, {}, {}, free(1), {}, {}, free(2)}
	var requests atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(requests.Add(1)) - 1
		if i >= len(script) || !script[i].Exists {
			if i >= len(script) {
				<-release // keep the test's end quiet
			}
			http.Error(w, `{"error":"down","code":"unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvent(w, "current", script[i])
		if i == len(script)-1 {
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	defer close(release)

	var (
		mu     sync.Mutex
		delays []time.Duration
	)
	o := Connect(srv.URL, WithBackoff(100*ms, 1000*ms), WithJitter(func() float64 { return 0.5 }))
	o.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		delays = append(delays, d)
		mu.Unlock()
		return ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := collect(ctx, o)
	expectState(t, ch, free(1))
	expectState(t, ch, free(2))
	cancel()
	expectEnd(t, ch)

	mu.Lock()
	defer mu.Unlock()
	want := []time.Duration{150 * ms, 250 * ms, 450 * ms, 150 * ms, 250 * ms, 450 * ms}
	if !reflect.DeepEqual(delays, want) {
		t.Fatalf("waits %v, want %v (growing, reset after the stream that delivered a state)", delays, want)
	}
}

// TestBackoffHonoursRetryAfter: a 503 too_many_clients with Retry-After waits that long, but
// never more than max.
func TestBackoffHonoursRetryAfter(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) <= 2 {
			w.Header().Set("Retry-After", "5")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"full","code":"too_many_clients","request_id":"req_1"}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvent(w, "current", free(1))
		<-r.Context().Done()
	}))
	defer srv.Close()
	var (
		mu     sync.Mutex
		delays []time.Duration
	)
	for _, max := range []time.Duration{10 * time.Second, 2 * time.Second} {
		requests.Store(0)
		delays = nil
		o := Connect(srv.URL, WithBackoff(100*ms, max), WithJitter(func() float64 { return 0 }))
		o.sleep = func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			delays = append(delays, d)
			mu.Unlock()
			return ctx.Err()
		}
		ctx, cancel := context.WithCancel(context.Background())
		ch := collect(ctx, o)
		expectState(t, ch, free(1))
		cancel()
		expectEnd(t, ch)
		mu.Lock()
		want := min(5*time.Second, max)
		if !reflect.DeepEqual(delays, []time.Duration{want, want}) {
			t.Errorf("max %v: waits %v, want %v twice", max, delays, want)
		}
		mu.Unlock()
	}
}
