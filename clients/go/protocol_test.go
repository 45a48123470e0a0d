package swarmlease

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tests of this file play a misbehaving server on loopback: an event that never ends, data
// that is no state. Every such stream is a protocol error: the watch yields nothing of it,
// drops the connection and reconnects, and logs what was wrong.

// errorLog records the errors a watch logs with its reconnects (their "err" attribute).
type errorLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *errorLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			l.mu.Lock()
			l.errs = append(l.errs, a.Value.String())
			l.mu.Unlock()
		}
		return true
	})
	return nil
}
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

// expect checks that an error logged so far contains want, and that none is long: an error
// names what was wrong with an event, it does not repeat the event.
func (l *errorLog) expect(t *testing.T, want string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	found := false
	for _, e := range l.errs {
		if len(e) > 1000 {
			t.Errorf("a logged error of %d bytes: %.200s…", len(e), e)
		}
		found = found || strings.Contains(e, want)
	}
	if !found {
		t.Fatalf("no logged error says %q; logged:\n%s", want, strings.Join(l.errs, "\n"))
	}
}

// smallBuffers serves h with socket buffers of 64 KiB on the server's side, and returns a client
// with the same on its side, so that the bytes the server manages to write before the client
// closes the connection measure what the client read, not what the kernel held for it.
func smallBuffers(t *testing.T, h http.Handler) (*httptest.Server, *http.Client) {
	t.Helper()
	const size = 64 << 10
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if err := c.(*net.TCPConn).SetWriteBuffer(size); err != nil {
			t.Error(err)
		}
		return ctx
	}
	srv.Start()
	t.Cleanup(func() { stopServer(srv) })
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				err = c.(*net.TCPConn).SetReadBuffer(size)
			}
			return c, err
		},
	}}
	t.Cleanup(client.CloseIdleConnections)
	return srv, client
}

// TestWatchGivesUpOnAnOversizedEvent: a stream whose event never ends (data lines without the
// blank line that dispatches them, or one line without an end) is dropped once the event
// passes maxEvent. The server's first stream writes until the client closes it, up to 32 MiB;
// the bytes it wrote show how much the client read. The next stream is a good one.
func TestWatchGivesUpOnAnOversizedEvent(t *testing.T) {
	const offered = 32 << 20
	// Past maxEvent the client reads at most the 4 KiB of its own buffer; what the server wrote
	// beyond that is in both sockets' buffers (64 KiB, which Linux doubles), its response
	// writer's and the 64 KiB chunk in flight: a few hundred KiB in all.
	const bound = 2 * maxEvent
	for _, tc := range []struct {
		name        string
		start, fill string // fill repeats after start
	}{
		{"data lines without a blank line", "event: change\n", "data: " + strings.Repeat("x", 1018) + "\n"},
		{"empty data lines", "event: change\n", "data:\n"},
		{"one line without an end", "event: change\ndata: ", strings.Repeat("x", 1024)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written := make(chan int, 1)
			var requests atomic.Int64
			srv, client := smallBuffers(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				if requests.Add(1) > 1 {
					writeEvent(w, "current", free(1))
					<-r.Context().Done()
					return
				}
				n, _ := fmt.Fprint(w, tc.start)
				chunk := []byte(strings.Repeat(tc.fill, 64<<10/len(tc.fill)))
				for n < offered {
					m, err := w.Write(chunk)
					n += m
					if err != nil {
						break
					}
				}
				written <- n
			}))
			var log errorLog
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := collect(ctx, Connect(srv.URL, append(fast(), WithHTTPClient(client), WithLogger(slog.New(&log)))...))
			expectState(t, ch, free(1))
			var n int
			select {
			case n = <-written:
			case <-time.After(waitFor):
				t.Fatal("the first stream's handler did not end")
			}
			if n > bound {
				t.Fatalf("the server wrote %d bytes of one event before the client gave up, want at most %d", n, bound)
			}
			log.expect(t, fmt.Sprintf("event \"change\": larger than %d bytes", maxEvent))
		})
	}
}

// validState is a State as the contract has it, as a JSON object to spoil field by field.
func validState() map[string]any {
	return map[string]any{"namespace": "demo", "exists": true, "acquired": true, "holder_id": "a", "node_id": "n-a",
		"task_id": "t-a", "fence": 7, "acquired_at": "2030-01-02T03:04:05Z", "renewed_at": "2030-01-02T03:04:06.5Z",
		"expires_at": nil, "ttl_ms": 30000}
}

// validFrame is a watch frame of testRoom with a leader, as a JSON object to spoil field by field.
func validFrame() map[string]any {
	return map[string]any{"schema_version": 1, "election_id": testRoom, "status": "leader", "retry_after_ms": 5000,
		"observed_at": "2030-01-02T03:04:00Z",
		"leader":      map[string]any{"candidate_id": "a", "term": 3, "expires_at": "2030-01-02T03:04:05.000Z", "metadata": "m"}}
}

// spoiled returns base's JSON with set's fields replaced (a nil value: null) and drop's removed.
func spoiled(base map[string]any, set map[string]any, drop ...string) string {
	m := maps.Clone(base)
	maps.Copy(m, set)
	for _, k := range drop {
		delete(m, k)
	}
	data, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// offContract are the data of events that are no State, and what the error must say.
var offContract = []struct{ name, data, want string }{
	{"null", "null", "want a JSON object, got null"},
	{"number", "42", "want a JSON object, got a number"},
	{"string", `"state"`, "want a JSON object, got a string"},
	{"array", "[]", "want a JSON object, got an array"},
	{"boolean", "true", "want a JSON object, got a boolean"},
	{"not JSON", "{not json", "not JSON"},
	{"empty object", "{}", `field "namespace": missing`},
	{"fence missing", spoiled(validState(), nil, "fence"), `field "fence": missing`},
	{"expires_at missing", spoiled(validState(), nil, "expires_at"), `field "expires_at": missing`},
	{"exists null", spoiled(validState(), map[string]any{"exists": nil}), `field "exists": want a boolean, got null`},
	{"holder_id a number", spoiled(validState(), map[string]any{"holder_id": 1}), `field "holder_id": want a string, got a number`},
	{"fence a string", spoiled(validState(), map[string]any{"fence": "7"}), `field "fence": want a non-negative integer, got a string`},
	{"fence negative", spoiled(validState(), map[string]any{"fence": -1}), `field "fence": want a non-negative integer, got a number`},
	{"fence a fraction", spoiled(validState(), map[string]any{"fence": 1.5}), `field "fence": want a non-negative integer, got a number`},
	{"ttl_ms a boolean", spoiled(validState(), map[string]any{"ttl_ms": false}), `field "ttl_ms": want an integer, got a boolean`},
	{"acquired_at not a time", spoiled(validState(), map[string]any{"acquired_at": "yesterday"}), `field "acquired_at": want an RFC 3339 time or null, got a string`},
	{"renewed_at a number", spoiled(validState(), map[string]any{"renewed_at": 0}), `field "renewed_at": want an RFC 3339 time or null, got a number`},
}

// TestWatchRefusesStatesOffContract: an event whose data is not a State the contract allows
// (not an object, a field missing or of another type) is never yielded: the watch drops the
// stream and takes the state of the next one, and its log names the event and the fault.
func TestWatchRefusesStatesOffContract(t *testing.T) {
	for _, tc := range offContract {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				if requests.Add(1) == 1 {
					fmt.Fprintf(w, "id: 7\nevent: current\ndata: %s\n\n", tc.data)
					w.(http.Flusher).Flush()
				} else {
					writeEvent(w, "current", held("b", 9))
				}
				<-r.Context().Done()
			}))
			defer stopServer(srv)
			var log errorLog
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := collect(ctx, Connect(srv.URL, append(fast(), WithLogger(slog.New(&log)))...))
			expectState(t, ch, held("b", 9))
			log.expect(t, `event "current" (id "7"): invalid state: `+tc.want)
		})
	}
}

// TestWatchRoomRefusesFramesOffContract: as TestWatchRefusesStatesOffContract, for the frames of
// a room's watch stream, after a first good frame: the bad one is not yielded, the next
// stream's frame is.
func TestWatchRoomRefusesFramesOffContract(t *testing.T) {
	leader := func(set map[string]any, drop ...string) map[string]any {
		return map[string]any{"leader": json.RawMessage(spoiled(validFrame()["leader"].(map[string]any), set, drop...))}
	}
	for _, tc := range []struct{ name, data, want string }{
		{"null", "null", "want a JSON object, got null"},
		{"number", "42", "want a JSON object, got a number"},
		{"empty object", "{}", `field "schema_version": missing`},
		{"schema_version 2", spoiled(validFrame(), map[string]any{"schema_version": 2}), `field "schema_version": want 1`},
		{"another room", spoiled(validFrame(), map[string]any{"election_id": "room-another1"}), `field "election_id": want "` + testRoom + `"`},
		{"status follower", spoiled(validFrame(), map[string]any{"status": "follower"}), `field "status": want "leader" or "vacant"`},
		{"status null", spoiled(validFrame(), map[string]any{"status": nil}), `field "status": want a string, got null`},
		{"leader missing", spoiled(validFrame(), nil, "leader"), `field "leader": missing`},
		{"leader null", spoiled(validFrame(), map[string]any{"leader": nil}), `status "leader" without a leader`},
		{"vacant with a leader", spoiled(validFrame(), map[string]any{"status": "vacant"}), `status "vacant" with a leader`},
		{"leader a string", spoiled(validFrame(), map[string]any{"leader": "a"}), `field "leader": want an object or null, got a string`},
		{"leader.term missing", spoiled(validFrame(), leader(nil, "term")), `field "leader.term": missing`},
		{"leader.candidate_id a number", spoiled(validFrame(), leader(map[string]any{"candidate_id": 5})), `field "leader.candidate_id": want a string, got a number`},
		{"leader.metadata null", spoiled(validFrame(), leader(map[string]any{"metadata": nil})), `field "leader.metadata": want a string, got null`},
		{"leader.expires_at null", spoiled(validFrame(), leader(map[string]any{"expires_at": nil})), `field "leader.expires_at": want an RFC 3339 time, got null`},
		{"retry_after_ms a string", spoiled(validFrame(), map[string]any{"retry_after_ms": "5"}), `field "retry_after_ms": want an integer, got a string`},
		{"observed_at missing", spoiled(validFrame(), nil, "observed_at"), `field "observed_at": missing`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(t, func(w http.ResponseWriter, r *http.Request, n int, _ request) {
				w.Header().Set("Content-Type", "text/event-stream")
				if n == 1 {
					fmt.Fprintf(w, "%sevent: state\ndata: %s\n\n", stateFrame(testRoom, "a", 1), tc.data)
				} else {
					fmt.Fprint(w, stateFrame(testRoom, "b", 2))
				}
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			})
			var log errorLog
			el := s.client(t, WithLogger(slog.New(&log)))
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			var got []string
			for st, err := range el.WatchRoom(ctx, testRoom) {
				if err != nil {
					t.Fatal(err)
				}
				who := "vacant"
				if st.Leader != nil {
					who = fmt.Sprintf("%s/%d", st.Leader.CandidateID, st.Leader.Term)
				}
				got = append(got, fmt.Sprintf("%s %s", st.Status, who))
				if len(got) == 2 {
					break
				}
			}
			if want := "leader a/1,leader b/2"; strings.Join(got, ",") != want {
				t.Fatalf("states %q, want %q", got, want)
			}
			log.expect(t, `event "state": invalid state: `+tc.want)
		})
	}
}
