package cmdutil

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bounds of a LogQueue: lines waiting for the stream, and their bytes together.
const (
	logQueueLines = 1024
	logQueueBytes = 1 << 20
)

// LogQueue is the commands' stderr: a bounded queue in front of the real stream, which a
// goroutine of its own writes. A log line never waits for the stream's reader — a blocked log
// driver, a paused terminal, or the supervised command filling the pipe they share — so that no
// log line can hold up run between a term's end and the command's stop. A line that does not
// fit is dropped and counted (Dropped, and the metric log_lines_dropped_total); once the stream
// takes lines again, the queue says how many it dropped, in a line of its own.
type LogQueue struct {
	w       io.Writer
	lines   chan []byte
	queued  atomic.Int64 // bytes in lines
	dropped atomic.Uint64
	// notice formats the line that reports drops (set by LogOptions.Logger, in the log's format).
	notice   atomic.Pointer[func(dropped, total uint64) []byte]
	closing  chan struct{}
	finished chan struct{}
	once     sync.Once
}

// NewLogQueue starts a queue in front of w.
func NewLogQueue(w io.Writer) *LogQueue {
	q := &LogQueue{w: w, lines: make(chan []byte, logQueueLines), closing: make(chan struct{}), finished: make(chan struct{})}
	go q.run()
	return q
}

// Write queues a copy of p, one line of the log (slog's handlers write each record at once),
// or drops it when the queue is full. It never blocks and never fails.
func (q *LogQueue) Write(p []byte) (int, error) {
	n := int64(len(p))
	if q.queued.Add(n) > logQueueBytes {
		q.queued.Add(-n)
		q.dropped.Add(1)
		return len(p), nil
	}
	select {
	case q.lines <- append([]byte(nil), p...):
	default:
		q.queued.Add(-n)
		q.dropped.Add(1)
	}
	return len(p), nil
}

// Dropped is how many lines the queue has dropped.
func (q *LogQueue) Dropped() uint64 { return q.dropped.Load() }

func (q *LogQueue) run() {
	defer close(q.finished)
	var reported uint64
	write := func(line []byte) {
		q.queued.Add(-int64(len(line)))
		// An error (EPIPE: the reader went away) is no reason to stop: the next line may pass.
		_, _ = q.w.Write(line)
		if total := q.dropped.Load(); total > reported && len(q.lines) == 0 {
			if f := q.notice.Load(); f != nil {
				_, _ = q.w.Write((*f)(total-reported, total))
			}
			reported = total
		}
	}
	for {
		select {
		case line := <-q.lines:
			write(line)
		case <-q.closing:
			for {
				select {
				case line := <-q.lines:
					write(line)
				default:
					return
				}
			}
		}
	}
}

// Close writes what is queued, waiting at most timeout for the stream, and stops the queue;
// lines written later are dropped. A stream that takes nothing does not hold up the exit.
func (q *LogQueue) Close(timeout time.Duration) {
	q.once.Do(func() { close(q.closing) })
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-q.finished:
	case <-t.C:
	}
}

// RegisterLogDrops adds the metric log_lines_dropped_total to reg when stderr is a LogQueue.
func RegisterLogDrops(reg prometheus.Registerer, stderr io.Writer) {
	q, ok := stderr.(*LogQueue)
	if !ok {
		return
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: "lfp_swarm_lease", Name: "log_lines_dropped_total",
		Help: "Log lines dropped because stderr was not read fast enough (a log line never waits for the reader).",
	}, func() float64 { return float64(q.Dropped()) }))
}
