package swarmlease

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readAll returns the events of stream and the error that ended it.
func readAll(r io.Reader) ([]event, error) {
	p := newSSEReader(r)
	var out []event
	for {
		ev, err := p.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEParsing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string
		want   []event
	}{
		{"LF", "event: current\ndata: {}\n\n", []event{{"current", "{}", ""}}},
		{"CRLF", "event: current\r\ndata: {}\r\n\r\n", []event{{"current", "{}", ""}}},
		{"CR", "event: current\rdata: {}\r\r", []event{{"current", "{}", ""}}},
		{"mixed endings", "event: a\r\ndata: 1\n\revent: b\rdata: 2\r\n\n", []event{{"a", "1", ""}, {"b", "2", ""}}},
		{"multi-line data joined by LF", "data: {\"a\":\ndata: 1}\n\n", []event{{"message", "{\"a\":\n1}", ""}}},
		{"comments anywhere", ": hello\nevent: change\n: keep-alive\ndata: x\n\n: keep-alive\n\n", []event{{"change", "x", ""}}},
		{"keep-alives only", ": keep-alive\n\n: keep-alive\n\n", nil},
		{"no space after colon", "event:change\ndata:x\n\n", []event{{"change", "x", ""}}},
		{"only one space is removed", "data:  x \n\n", []event{{"message", " x ", ""}}},
		{"field without colon", "data\ndata\n\n", []event{{"message", "\n", ""}}},
		{"empty data line", "data:\n\n", []event{{"message", "", ""}}},
		{"id kept; retry and unknown fields ignored", "id: 7\nretry: 10\nfoo: bar\nevent: change\ndata: x\n\n", []event{{"change", "x", "7"}}},
		{"id with NUL ignored", "id: 7\nid: 8\x00\ndata: x\n\n", []event{{"message", "x", "7"}}},
		{"id does not carry over", "id: 7\ndata: 1\n\nid: 8\n\ndata: 2\n\n", []event{{"message", "1", "7"}, {"message", "2", ""}}},
		{"event without data not dispatched; its name does not carry over", "event: a\n\ndata: x\n\n", []event{{"message", "x", ""}}},
		{"name resets after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n", []event{{"a", "1", ""}, {"message", "2", ""}}},
		{"byte-order mark", "\uFEFFevent: current\ndata: x\n\n", []event{{"current", "x", ""}}},
		{"unterminated event discarded", "event: a\ndata: 1\n\nevent: b\ndata: 2\n", []event{{"a", "1", ""}}},
		{"unterminated line discarded", "data: 1\n\ndata: 2", []event{{"message", "1", ""}}},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []event{{"message", `{"a":"b:c"}`, ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Whole, and one byte per read: a line ending split across reads (CR | LF) must
			// not produce an extra empty line.
			for _, r := range []io.Reader{strings.NewReader(tc.stream), iotest.OneByteReader(strings.NewReader(tc.stream))} {
				got, err := readAll(r)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("ended with %v, want EOF", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("events %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestSSEReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := readAll(io.MultiReader(strings.NewReader("data: 1\n"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
}

// TestSSEEventTooLarge: an event is bounded by maxEvent, whether in one line or in many; its
// comments and line endings do not count, and each event has a bound of its own.
func TestSSEEventTooLarge(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name, stream string
		want         error // nil: the stream's events are read to the end
	}{
		{"one line", "event: big\ndata: " + x(maxEvent) + "\n\n", errEventTooLarge{name: "big"}},
		{"one line without an end", "id: 1\ndata: " + x(maxEvent), errEventTooLarge{id: "1"}},
		{"a comment line", ": " + x(maxEvent) + "\n\n", errEventTooLarge{}},
		{"data lines", strings.Repeat("data: "+x(1018)+"\n", 1025) + "\n", errEventTooLarge{}},
		{"empty data lines", strings.Repeat("data:\n", maxEvent/5+1) + "\n", errEventTooLarge{}},
		{"exactly the bound, a comment before it aside", ": " + x(1000) + "\ndata: " + x(maxEvent-6-8) + "\nevent: a\n\n", nil},
		{"the bound is per event", strings.Repeat("data: "+x(maxEvent/2)+"\n\n", 3), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(strings.NewReader(tc.stream))
			if tc.want == nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("ended with %v, want EOF", err)
				}
				return
			}
			if err != tc.want {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestSSEBareCRDispatchesAtOnce: an event ending in CR CR is dispatched without waiting for
// the next byte (which, on a live stream, may come only with the next keep-alive).
func TestSSEBareCRDispatchesAtOnce(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	p := newSSEReader(pr)
	got := make(chan event, 1)
	go func() {
		ev, err := p.next()
		if err == nil {
			got <- ev
		}
	}()
	go func() { _, _ = pw.Write([]byte("event: change\rdata: x\r\r")) }()
	select {
	case ev := <-got:
		if ev != (event{"change", "x", ""}) {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(waitFor):
		t.Fatal("the event was held back waiting for a byte after the CR")
	}
}
