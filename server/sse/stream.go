package sse

import "sync"

// Stream is one client's queue of frames, filled by whoever publishes (a Hub, or the elections
// API's room watches) and emptied by the stream's writer. Publishing never blocks: a client
// whose queue is full has fallen behind, and its stream ends (it reconnects and gets the current
// state), so that one slow client cannot slow the others.
type Stream struct {
	frames chan []byte
	done   chan struct{}
	once   sync.Once
	err    error
}

// NewStream returns a stream that may lag buffer frames behind.
func NewStream(buffer int) *Stream {
	return &Stream{frames: make(chan []byte, buffer), done: make(chan struct{})}
}

// Offer queues frame if the stream has room, and reports whether it had.
func (s *Stream) Offer(frame []byte) bool {
	select {
	case s.frames <- frame:
		return true
	default:
		return false
	}
}

// End ends the stream for err; the first call decides.
func (s *Stream) End(err error) {
	s.once.Do(func() { s.err = err; close(s.done) })
}

// Frames yields the queued frames.
func (s *Stream) Frames() <-chan []byte { return s.frames }

// Done is closed when the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err is why the stream ended, once Done is closed.
func (s *Stream) Err() error { return s.err }
