package swarmlease

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// event is one dispatched server-sent event.
type event struct {
	name string // "message" when the stream named none
	data string
	id   string // the event's id field; the servers send none
}

// maxEvent bounds one event: the bytes of its lines, comments and line endings not counted,
// and of the line being read (a comment's too). A State or a watch frame is well under 1 KiB; a
// larger event is not from an lfp-swarm-lease server, and reading it without bound would let
// such a peer exhaust the client's memory. The npm client has the same bound.
const maxEvent = 1 << 20

// errEventTooLarge ends a stream whose event grew past maxEvent before its end.
type errEventTooLarge struct{ name, id string }

func (e errEventTooLarge) Error() string {
	return fmt.Sprintf("%s: larger than %d bytes", describeEvent(e.name, e.id), maxEvent)
}

// describeEvent names an event for an error: its type and id, each cut short, since a
// misbehaving peer chooses them.
func describeEvent(name, id string) string {
	name = cmp.Or(name, "message")
	s := "event " + quoteShort(name)
	if id != "" {
		s += " (id " + quoteShort(id) + ")"
	}
	return s
}

// quoteShort quotes at most 64 bytes of s.
func quoteShort(s string) string {
	const most = 64
	if len(s) <= most {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:most]) + "…"
}

// sseReader parses a text/event-stream as the WHATWG HTML standard defines it: lines end in
// CRLF, LF or CR; lines starting with ':' are comments; "field: value" lines with one optional
// space after the colon; data lines accumulate, joined by LF; a blank line dispatches the
// event. The id field only names the event in errors, and retry is ignored: every connection
// starts with the complete current state, so there is nothing to resume and no server-chosen
// delay to honour.
type sseReader struct {
	rd     *bufio.Reader
	line   []byte
	skipLF bool // the last line ended in CR: an LF right after it belongs to that line ending
	first  bool // the first line was read (a byte-order mark is only allowed before it)
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{rd: bufio.NewReader(r)}
}

// next returns the next event. At the end of the stream it returns io.EOF (an event not
// terminated by a blank line is discarded, as the standard requires), errEventTooLarge, or the
// read error.
func (r *sseReader) next() (event, error) {
	var (
		name, id string
		data     strings.Builder
		hasData  bool
		size     int // the bytes of the event's lines so far
	)
	for {
		line, ok, err := r.readLine(maxEvent - size)
		if err != nil {
			return event{}, err
		}
		if !ok {
			return event{}, errEventTooLarge{name: name, id: id}
		}
		if !r.first {
			r.first = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			if !hasData {
				// An event without data is not dispatched; its name and id do not carry over.
				name, id, size = "", "", 0
				continue
			}
			name = cmp.Or(name, "message")
			return event{name: name, data: data.String(), id: id}, nil
		}
		if line[0] == ':' {
			continue
		}
		size += len(line)
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 { // the standard ignores an id with a NUL
				id = string(value)
			}
		}
	}
}

// readLine returns the next line without its ending. A line is returned as soon as its CR
// arrives, without waiting for a possible LF: a stream using bare CRs would otherwise hold
// every event back until the server's next write. ok is false, and nothing more is read, when
// the line is longer than limit bytes.
func (r *sseReader) readLine(limit int) (line []byte, ok bool, err error) {
	r.line = r.line[:0]
	for {
		c, err := r.rd.ReadByte()
		if err != nil {
			// A partial last line is no line; the event it belongs to is incomplete.
			return nil, false, err
		}
		if r.skipLF {
			r.skipLF = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			return r.line, true, nil
		case '\r':
			r.skipLF = true
			return r.line, true, nil
		}
		if len(r.line) >= limit {
			return nil, false, nil
		}
		r.line = append(r.line, c)
	}
}
