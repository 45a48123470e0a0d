package sse

import (
	"context"
	"net/http"
	"time"
)

// writeTimeout bounds one write to an SSE client: a client that stops reading is cut off.
const writeTimeout = 10 * time.Second

// Writer writes the frames of one stream to its response, each flushed within writeTimeout.
// Streams that a Hub's fan-out does not take over are written by their handler's goroutine
// through it.
type Writer struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// Open answers 200 with the headers of an SSE stream (and those already set on w) and returns
// the writer of its frames.
func Open(w http.ResponseWriter) *Writer {
	setStreamHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	return &Writer{w: w, rc: http.NewResponseController(w)}
}

// Write writes one frame and flushes it, within writeTimeout.
func (w *Writer) Write(frame []byte) error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := w.w.Write(frame); err != nil {
		return err
	}
	return w.rc.Flush()
}

// Pump writes s's frames, and a keep-alive comment every keepAlive, until ctx ends, closing is
// closed (the server shuts down), s ends or a write fails.
func (w *Writer) Pump(ctx context.Context, s *Stream, keepAlive time.Duration, closing <-chan struct{}) {
	ticker := time.NewTicker(keepAlive)
	defer ticker.Stop()
	for {
		var frame []byte
		select {
		case <-ctx.Done():
			return
		case <-closing:
			return
		case <-s.Done():
			return
		case frame = <-s.Frames():
		case <-ticker.C:
			frame = keepAliveFrame
		}
		if w.Write(frame) != nil {
			return
		}
	}
}
