//go:build !linux

package sse

import "errors"

// fanoutSupported: without the Linux hangup watcher, every SSE stream keeps its handler
// goroutine, which notices disconnects through net/http (see fanout.go).
const fanoutSupported = false

var errNoFanout = errors.New("the SSE fan-out needs Linux")

func writeNonblocking(int, []byte) (int, error) { return 0, errNoFanout }

// hangupWatcher is not available on this platform; newHangupWatcher always fails.
type hangupWatcher struct{}

func newHangupWatcher(func(*streamConn)) (*hangupWatcher, error) { return nil, errNoFanout }
func (*hangupWatcher) track(*streamConn)                         {}
func (*hangupWatcher) arm(*streamConn)                           {}
func (*hangupWatcher) forget(*streamConn)                        {}
func (*hangupWatcher) stop()                                     {}
