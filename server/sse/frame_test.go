package sse

import (
	"testing"
	"time"
)

// TestEventFrames: an event is its name, its retry when it has one, and its data, each on a line
// of its own, and a blank line.
func TestEventFrames(t *testing.T) {
	data := []byte(`{"a":1}`)
	for _, c := range []struct {
		name  string
		retry time.Duration
		want  string
	}{
		{"current", 0, "event: current\ndata: {\"a\":1}\n\n"},
		{"state", time.Second, "event: state\nretry: 1000\ndata: {\"a\":1}\n\n"},
	} {
		if got := string(Event(c.name, c.retry, data)); got != c.want {
			t.Errorf("Event(%q, %v): %q, want %q", c.name, c.retry, got, c.want)
		}
	}
}
