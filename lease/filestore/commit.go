package filestore

import (
	"errors"
	"sync"
	"sync/atomic"
)

// groupCommit makes the store's in-place slot writes durable together: a write that arrives
// while a flush runs waits for the next one, which covers every write that arrived meanwhile —
// of any shard. Where one system call can flush several files (syncfs(2) on Linux, see
// sync_linux.go) a batch costs one flush however many shards it wrote; elsewhere it costs one
// fdatasync per file, as before. The writer keeps its shard's lock until its flush is done, so
// an acknowledgement never precedes the flush, and no other process writes the shard meanwhile.
//
// There is no flushing goroutine: the first writer to find no flush running leads, flushes the
// batch, and hands the lead to the oldest waiter, so a Store needs no Close.
type groupCommit struct {
	mu       sync.Mutex
	flushing bool
	pending  []*flushRequest
	// opens numbers the slot files opened for writing, in order (see flushRequest.opened).
	opens atomic.Uint64
	// flushes counts the flush system calls made (syncBatch's), for tests and metrics.
	flushes uint64
}

// flushRequest is one written slot file waiting for its flush.
type flushRequest struct {
	f rawFile
	// opened is when f was opened for the write, in groupCommit.opens order. syncfs(2) reports
	// the file system's write-back errors since the file it is called on was opened, so a batch
	// flushes through its earliest-opened file: an error of any write of the batch is reported.
	opened uint64
	// result receives the flush's outcome, or errLead when the request's writer is to lead the
	// next flush.
	result chan error
}

// flushRequests keeps flush requests, with their channels, for the next writes: a request per
// slot write was two allocations on every request of the elections API.
var flushRequests = sync.Pool{New: func() any { return &flushRequest{result: make(chan error, 1)} }}

// errLead tells a waiting writer that it leads the next flush.
var errLead = errors.New("lead the next flush")

// opened numbers a slot file just opened for a write, before a byte of it is written; sync takes
// the number.
func (g *groupCommit) opened() uint64 { return g.opens.Add(1) }

// sync returns once f's data written so far is durable, flushed together with the writes of the
// other shards that arrived while the previous flush ran. opened is f's number from opened.
func (g *groupCommit) sync(f rawFile, opened uint64) error {
	req := flushRequests.Get().(*flushRequest)
	req.f, req.opened = f, opened
	// Every result sent to req has been received by then (one per request: its outcome, or
	// the lead, after which it is never queued again): it can serve the next write.
	defer flushRequests.Put(req)
	g.mu.Lock()
	g.pending = append(g.pending, req)
	if g.flushing {
		g.mu.Unlock()
		if err := <-req.result; err != errLead {
			return err
		}
		g.mu.Lock()
	}
	g.flushing = true
	batch := g.pending
	g.pending = nil
	g.mu.Unlock()

	calls, err := syncBatch(batch)

	g.mu.Lock()
	g.flushes += uint64(calls)
	var next *flushRequest
	if len(g.pending) > 0 {
		next = g.pending[0]
	} else {
		g.flushing = false
	}
	g.mu.Unlock()
	for _, r := range batch {
		if r != req {
			r.result <- err
		}
	}
	if next != nil {
		next.result <- errLead
	}
	return err
}

// flushCount returns how many flush system calls the store made for its slot writes.
func (g *groupCommit) flushCount() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.flushes
}
