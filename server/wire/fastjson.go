package wire

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// huma decodes every request body twice (it validates a generic value, then fills the
// operation's struct), and each strict decode used to read it three times: jsontext's check,
// encoding/json's scan and the exact-field pass — a fifth of the server's CPU per request of
// the elections API. DecodeFast reads the body once, with the same jsontext defaults as checkJSON, and
// takes only bodies it can decode exactly as the strict path would: anything else — an error,
// a type it does not know, an unknown field, trailing data — returns false, and the strict path
// decodes it again, so that every refusal keeps its words.

// fastDecoder is a reusable jsontext.Decoder (a few kilobytes of state) with the Buffer it reads
// the body from, in place: jsontext reads a *bytes.Buffer's bytes without copying them.
type fastDecoder struct {
	dec *jsontext.Decoder
	src bytes.Buffer
}

var fastDecoders = sync.Pool{New: func() any { return &fastDecoder{dec: jsontext.NewDecoder(noInput)} }}

// noInput is what a pooled decoder reads from: nothing, so that it keeps no body alive. It is
// never read (Reset only stores it), so sharing it is safe.
var noInput = bytes.NewReader(nil)

// DecodeFast decodes data into v — a *any or a FieldDecoder — if it can do so exactly as
// Decode's strict path would, and reports whether it did. A plain body (plainjson.go) is not
// even tokenised. The elections fast path serves only the bodies it takes, and leaves every
// other to huma, so that every refusal keeps its words.
func DecodeFast(data []byte, v any) bool {
	if fv, ok := v.(FieldDecoder); ok && decodePlain(data, fv) {
		return true
	}
	return decodeTokens(data, v)
}

// decodeTokens is DecodeFast by jsontext's tokens.
func decodeTokens(data []byte, v any) bool {
	fd := fastDecoders.Get().(*fastDecoder)
	fd.src = *bytes.NewBuffer(data)
	dec := fd.dec
	dec.Reset(&fd.src)
	defer func() {
		dec.Reset(noInput)
		fd.src = bytes.Buffer{}
		fastDecoders.Put(fd)
	}()
	var ok bool
	switch v := v.(type) {
	case *any:
		var val any
		if val, ok = readAny(dec); ok {
			*v = val
		}
	case FieldDecoder:
		ok = readFields(dec, v)
	}
	if !ok {
		return false
	}
	_, err := dec.ReadToken()
	return err == io.EOF // more than one value: the strict path refuses it
}

// readAny reads one JSON value as encoding/json decodes it into an interface: objects as
// map[string]any, arrays as []any, numbers as float64.
func readAny(dec *jsontext.Decoder) (any, bool) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, false
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, false
			}
			key := name.String() // before the next read voids the token
			val, ok := readAny(dec)
			if !ok {
				return nil, false
			}
			m[key] = val
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		return m, true
	case '[':
		a := []any{}
		for dec.PeekKind() != ']' {
			val, ok := readAny(dec)
			if !ok {
				return nil, false
			}
			a = append(a, val)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		return a, true
	case '"':
		return tok.String(), true
	case '0':
		f, err := strconv.ParseFloat(tok.String(), 64)
		return f, err == nil
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	}
	return nil, false
}

// readFields reads one JSON object into v, field by field.
func readFields(dec *jsontext.Decoder, v FieldDecoder) bool {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	v.Reset()
	fields := v.Fields()
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return false
		}
		f := fieldIndex(fields, name.String()) // before the next read voids the token
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		switch kind := tok.Kind(); kind {
		case 'n': // null is absent
		case '"', '0':
			if f < 0 || !v.SetField(f, kind, tok.String()) {
				return false
			}
		default:
			return false
		}
	}
	_, err := dec.ReadToken()
	return err == nil
}
