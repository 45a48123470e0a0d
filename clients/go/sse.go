package swarmlease

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// event is one dispatched server-sent event.
type event struct {
	name string // "message" when the stream named none
	data string
}

// maxLine bounds one line of the stream. A State is well under 1 KiB; a longer line is not
// from an lfp-swarm-lease controller, and reading it without bound would let such a peer
// exhaust memory.
const maxLine = 1 << 20

// sseReader parses a text/event-stream as the WHATWG HTML standard defines it: lines end in
// CRLF, LF or CR; lines starting with ':' are comments; "field: value" lines with one optional
// space after the colon; data lines accumulate, joined by LF; a blank line dispatches the
// event. Fields other than event and data (id, retry) are ignored: every connection starts
// with the complete current state, so there is nothing to resume and no server-chosen delay
// to honour.
type sseReader struct {
	rd     *bufio.Reader
	line   []byte
	skipLF bool // the last line ended in CR: an LF right after it belongs to that line ending
	first  bool // the first line was read (a byte-order mark is only allowed before it)
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{rd: bufio.NewReader(r)}
}

// errLineTooLong ends a stream with a line longer than maxLine.
var errLineTooLong = errors.New("swarmlease: event-stream line too long")

// next returns the next event. At the end of the stream it returns io.EOF (an event not
// terminated by a blank line is discarded, as the standard requires) or the read error.
func (r *sseReader) next() (event, error) {
	var (
		name    string
		data    strings.Builder
		hasData bool
	)
	for {
		line, err := r.readLine()
		if err != nil {
			return event{}, err
		}
		if !r.first {
			r.first = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			if !hasData {
				// An event without data is not dispatched; its name does not carry over.
				name = ""
				continue
			}
			if name == "" {
				name = "message"
			}
			return event{name: name, data: data.String()}, nil
		}
		if line[0] == ':' {
			continue
		}
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
		}
	}
}

// readLine returns the next line without its ending. A line is returned as soon as its CR
// arrives, without waiting for a possible LF: a stream using bare CRs would otherwise hold
// every event back until the server's next write.
func (r *sseReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		c, err := r.rd.ReadByte()
		if err != nil {
			// A partial last line is no line; the event it belongs to is incomplete.
			return nil, err
		}
		if r.skipLF {
			r.skipLF = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			return r.line, nil
		case '\r':
			r.skipLF = true
			return r.line, nil
		}
		if len(r.line) >= maxLine {
			return nil, errLineTooLong
		}
		r.line = append(r.line, c)
	}
}
