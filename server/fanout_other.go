//go:build !linux

package server

import "errors"

// fanoutSupported: without the Linux hangup watcher, every SSE stream keeps its handler
// goroutine, which notices disconnects through net/http (see fanout.go).
const fanoutSupported = false

var errNoFanout = errors.New("the SSE fan-out needs Linux")

func writeNonblocking(int, []byte) (int, error) { return 0, errNoFanout }

// hangupWatcher is not available on this platform; newHangupWatcher always fails.
type hangupWatcher struct{}

func newHangupWatcher(func(*stream)) (*hangupWatcher, error) { return nil, errNoFanout }
func (*hangupWatcher) track(*stream)                         {}
func (*hangupWatcher) arm(*stream)                           {}
func (*hangupWatcher) forget(*stream)                        {}
func (*hangupWatcher) stop()                                 {}
