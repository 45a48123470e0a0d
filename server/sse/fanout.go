package sse

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The SSE streams of HTTP/1.1 clients are written by a few goroutines of the hub, not by one
// net/http handler goroutine each. The handler writes the response head and the current frame
// as usual, then hijacks the connection, hands it to the fan-out (Hub.HandOver) and returns:
// its goroutine, its stack and net/http's buffers are freed, and a stream costs a socket and a
// small struct. Writing each change to 10,000 clients from one goroutine per client cost
// 30 KB and 50 µs of CPU per client (BENCHMARKS.md, "HTTP API and SSE").
//
// The fan-out has one writer goroutine per CPU (GOMAXPROCS), each owning a shard of the
// streams. Everything else talks to a writer through its shard's queue of operations (a change
// to write, a stream to adopt, a client that hung up, the end), so the writer alone writes to
// and closes its streams: a frame is never interleaved with another write, and a closed stream
// is never written again.
//
// Rules, and why:
//
//   - A write never blocks. Each frame goes to a socket in one write(2) on the non-blocking
//     descriptor. A client whose socket cannot take the whole frame at once has filled the
//     kernel's send and receive buffers (tens of kilobytes at least: dozens of events or
//     more): it stopped reading or cannot keep up. It is dropped — closed at once, so that its partial frame is the last thing it
//     receives — and reconnects for the current state, as the goroutine path drops a client
//     that lags clientBuffer changes behind. One stuck client thus costs the others one failed
//     system call, not a write timeout.
//   - The response is chunked: net/http wrote the head of an HTTP/1.1 response of unknown
//     length with Transfer-Encoding: chunked. Every frame is therefore sent as one chunk; a
//     change is chunk-encoded once and the same bytes go to every stream. At shutdown each
//     stream gets the last chunk (lastChunk) after a complete frame and is closed, so its client
//     sees a clean end of the body, as with net/http's own streams.
//   - Disconnects are noticed without a reader per stream (which would cost a goroutine and its
//     stack per client again). On Linux, one epoll set watches every stream's socket for the
//     peer's FIN or reset (hangupWatcher); the writer then closes the stream, and sse_clients
//     falls within milliseconds, not at the next keep-alive. A client that half-closes its
//     sending side counts as gone, as net/http's own background read treats it. Peers that
//     vanish without a FIN are found by failing writes and by TCP keep-alive, which makes the
//     socket report an error.
//   - Keep-alive comments are written by the writers on one ticker each, not by a timer per
//     stream. Each stream's first keep-alive falls at a random point of its first interval, so
//     that clients that connected together (a restart, a reconnect storm) do not all get theirs
//     at the same tick: a change never waits behind one big burst of keep-alives.

// lastChunk ends a chunked body.
var lastChunk = []byte("0\r\n\r\n")

// appendChunk appends data as one HTTP/1.1 chunk.
func appendChunk(dst, data []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(data)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, data...)
	return append(dst, "\r\n"...)
}

// keepAliveChunk is keepAliveFrame as a chunk.
var keepAliveChunk = appendChunk(nil, keepAliveFrame)

// streamWriteTimeout bounds a write to a hijacked connection that is not a plain socket (a
// wrapped listener's connection, which cannot be written without blocking): a stream that
// cannot take a frame within it is dropped. Its writer waits that long at most.
const streamWriteTimeout = 5 * time.Millisecond

// errSlow: the client's buffers are full; it is dropped.
var errSlow = errors.New("the client does not keep up")

// fanout writes the hijacked SSE streams (see above).
type fanout struct {
	keepAlive time.Duration
	tick      time.Duration // granularity of keep-alives
	shards    []*shard
	hangups   *hangupWatcher // nil: disconnects show as failing writes only
	// removed is called once for every stream that ends; slow: it was dropped for not keeping up.
	removed func(slow bool)
	done    sync.WaitGroup // the writers
}

// shard is one writer goroutine's streams and queue.
type shard struct {
	f    *fanout
	size atomic.Int64 // streams adopted and not yet removed, for placement

	mu   sync.Mutex
	ops  []shardOp
	wake chan struct{} // one buffered signal: ops has work

	// Owned by the writer goroutine.
	streams []*streamConn
	spare   []shardOp // the other of the two queue buffers
	// The raw write's argument and results live here, so that the function passed to
	// RawConn.Write is allocated once per writer, not once per write.
	wbuf    []byte
	wn      int
	werr    error
	writeFn func(fd uintptr) bool
}

// shardOp is one operation for a writer; exactly one field is set.
type shardOp struct {
	frame  []byte      // a chunk for every stream (a change)
	add    *streamConn // a stream to adopt
	hangup *streamConn // a stream whose client went away
	end    bool        // end every stream cleanly and stop
}

// streamConn is one hijacked SSE connection.
type streamConn struct {
	conn  net.Conn
	raw   syscall.RawConn // nil: not a plain socket; written with a deadline instead
	shard *shard
	id    uint64 // the hangup watcher's key; 0: not watched

	// Owned by the shard's writer.
	idx     int       // in shard.streams; -1 when not in it
	pending []byte    // chunks queued for it before it was adopted, written first
	due     time.Time // of its next keep-alive
}

// newFanout starts the writers (one per GOMAXPROCS) and, where supported, the hangup watcher.
func newFanout(keepAlive time.Duration, removed func(slow bool)) *fanout {
	f := &fanout{keepAlive: keepAlive, tick: min(max(keepAlive/16, time.Millisecond), 250*time.Millisecond), removed: removed}
	for range max(runtime.GOMAXPROCS(0), 1) {
		sh := &shard{f: f, wake: make(chan struct{}, 1)}
		sh.writeFn = func(fd uintptr) bool {
			sh.wn, sh.werr = writeNonblocking(int(fd), sh.wbuf)
			return true // one attempt: never wait until the socket is writable
		}
		f.shards = append(f.shards, sh)
		f.done.Add(1)
		go sh.run()
	}
	if w, err := newHangupWatcher(f.hungUp); err == nil {
		f.hangups = w
	}
	return f
}

// add adopts conn, whose response head and first events are written; pending (chunks) is
// written before any later change. The caller (Hub.adopt) holds the hub's lock, which orders
// adoptions and broadcasts.
func (f *fanout) add(conn net.Conn, pending []byte) {
	s := &streamConn{conn: conn, pending: pending, idx: -1}
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			s.raw = rc
		}
	}
	sh := f.shards[0]
	for _, o := range f.shards[1:] {
		if o.size.Load() < sh.size.Load() {
			sh = o
		}
	}
	s.shard = sh
	sh.size.Add(1)
	if f.hangups != nil && s.raw != nil {
		f.hangups.track(s) // before the writer knows s: it reads s.id when it removes s
	}
	sh.enqueue(shardOp{add: s})
	if s.id != 0 {
		// After the add: a hangup reported at once is queued behind it.
		f.hangups.arm(s)
	}
}

// broadcast queues chunk for every stream (the caller holds the hub's lock).
func (f *fanout) broadcast(chunk []byte) {
	for _, sh := range f.shards {
		sh.enqueue(shardOp{frame: chunk})
	}
}

// hungUp is the hangup watcher's report that s's client went away.
func (f *fanout) hungUp(s *streamConn) { s.shard.enqueue(shardOp{hangup: s}) }

// close ends every stream cleanly and stops the writers and the watcher; nothing may be
// added or broadcast after it began.
func (f *fanout) close() {
	for _, sh := range f.shards {
		sh.enqueue(shardOp{end: true})
	}
	f.done.Wait()
	if f.hangups != nil {
		f.hangups.stop()
	}
}

func (sh *shard) enqueue(op shardOp) {
	sh.mu.Lock()
	sh.ops = append(sh.ops, op)
	sh.mu.Unlock()
	select {
	case sh.wake <- struct{}{}:
	default: // already signalled
	}
}

// run is the shard's writer.
func (sh *shard) run() {
	defer sh.f.done.Done()
	ticker := time.NewTicker(sh.f.tick)
	defer ticker.Stop()
	for {
		select {
		case <-sh.wake:
		case now := <-ticker.C:
			sh.keepAlives(now)
			continue
		}
		sh.mu.Lock()
		ops := sh.ops
		sh.ops = sh.spare
		sh.mu.Unlock()
		for _, op := range ops {
			switch {
			case op.frame != nil:
				sh.writeAll(op.frame)
			case op.add != nil:
				sh.adopt(op.add)
			case op.hangup != nil:
				if op.hangup.idx >= 0 {
					sh.remove(op.hangup, false)
				}
			case op.end:
				sh.endAll()
				return
			}
		}
		clear(ops) // the frames may be collected
		sh.spare = ops[:0]
	}
}

// adopt writes s's pending chunks and adds it to the shard.
func (sh *shard) adopt(s *streamConn) {
	s.idx = len(sh.streams)
	sh.streams = append(sh.streams, s)
	// The first keep-alive at a random point of the first interval spreads the keep-alives of
	// clients that connected together.
	s.due = time.Now().Add(rand.N(sh.f.keepAlive) + 1)
	if len(s.pending) > 0 {
		p := s.pending
		s.pending = nil
		sh.write(s, p)
	}
}

// writeAll writes chunk to every stream.
func (sh *shard) writeAll(chunk []byte) {
	for i := 0; i < len(sh.streams); {
		if sh.write(sh.streams[i], chunk) {
			i++
		} // else the last stream moved to i
	}
}

// keepAlives writes a keep-alive to every stream whose time has come.
func (sh *shard) keepAlives(now time.Time) {
	k := sh.f.keepAlive
	for i := 0; i < len(sh.streams); {
		s := sh.streams[i]
		if now.Before(s.due) {
			i++
			continue
		}
		if !sh.write(s, keepAliveChunk) {
			continue // the last stream moved to i
		}
		if s.due = s.due.Add(k); s.due.Before(now) { // the writer was late: keep the interval
			s.due = now.Add(k)
		}
		i++
	}
}

// endAll ends every stream with the last chunk, closes it, and stops the hangup reports'
// bookkeeping for it.
func (sh *shard) endAll() {
	for len(sh.streams) > 0 {
		s := sh.streams[len(sh.streams)-1]
		_ = sh.send(s, lastChunk) // best effort: a client that cannot take 5 bytes is gone
		sh.remove(s, false)
	}
}

// write writes p to s; on failure it removes s and returns false.
func (sh *shard) write(s *streamConn, p []byte) bool {
	err := sh.send(s, p)
	if err == nil {
		return true
	}
	sh.remove(s, errors.Is(err, errSlow))
	return false
}

// send writes all of p to s without blocking (see streamWriteTimeout for other connections);
// errSlow: s took less than all of p.
func (sh *shard) send(s *streamConn, p []byte) error {
	if s.raw == nil {
		if err := s.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
			return err
		}
		n, err := s.conn.Write(p)
		if errors.Is(err, os.ErrDeadlineExceeded) || (err == nil && n < len(p)) {
			return errSlow
		}
		return err
	}
	sh.wbuf = p
	err := s.raw.Write(sh.writeFn)
	sh.wbuf = nil
	switch {
	case err != nil: // the connection is closed
		return err
	case sh.werr == syscall.EAGAIN:
		return errSlow
	case sh.werr != nil: // reset or broken pipe: the client is gone
		return sh.werr
	case sh.wn < len(p):
		return errSlow
	}
	return nil
}

// remove takes s out of the shard and closes it.
func (sh *shard) remove(s *streamConn, slow bool) {
	last := sh.streams[len(sh.streams)-1]
	sh.streams[s.idx] = last
	last.idx = s.idx
	sh.streams[len(sh.streams)-1] = nil
	sh.streams = sh.streams[:len(sh.streams)-1]
	s.idx = -1
	sh.size.Add(-1)
	if s.id != 0 {
		sh.f.hangups.forget(s)
	}
	_ = s.conn.Close()
	sh.f.removed(slow)
}
