package swarmlease

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// The data of the events the watches yield is checked against the contract
// (clients/openapi.json) field by field: a value that is not a JSON object with every field the
// contract requires, each of its type, comes from something other than a server of the contract
// (a proxy's page, another version, a broken peer), and a watch that yielded it would hand the
// consumer a zero or partial state as if it were the election's. The npm client checks the same
// fields in the same order and words its errors alike. Fields the contract does not have are
// ignored: a later server may add some.

// wireObject reads the fields of one JSON object, keeping the first fault: every read after it
// returns a zero value, so that a decoder reads all its fields in the contract's order and
// reports the first that is wrong.
type wireObject struct {
	fields map[string]json.RawMessage
	path   string // the object's place in the event ("leader."), for errors
	err    *error // the first fault of the event, shared with the objects inside it
}

// parseObject parses an event's data, which must be a JSON object.
func parseObject(data []byte) (*wireObject, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		if _, ok := errors.AsType[*json.SyntaxError](err); ok {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(data))
	}
	if fields == nil {
		return nil, errors.New("want a JSON object, got null")
	}
	return &wireObject{fields: fields, err: new(error)}, nil
}

// jsonKind names the kind of a valid JSON value, for errors: they say what came instead of
// repeating it.
func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}

// failed records a fault unless there is one already.
func (o *wireObject) failed(format string, args ...any) {
	if *o.err == nil {
		*o.err = fmt.Errorf(format, args...)
	}
}

// ok reports whether no fault was found so far.
func (o *wireObject) ok() bool { return *o.err == nil }

// value returns the named field, or nil after recording it missing (or after an earlier fault).
func (o *wireObject) value(name string) json.RawMessage {
	if !o.ok() {
		return nil
	}
	v, found := o.fields[name]
	if !found {
		o.failed("field %q: missing", o.path+name)
		return nil
	}
	return v
}

// wrong records that the named field holds v where want belongs.
func (o *wireObject) wrong(name, want string, v json.RawMessage) {
	o.failed("field %q: want %s, got %s", o.path+name, want, jsonKind(v))
}

// check records that the named field is not want unless ok.
func (o *wireObject) check(name string, ok bool, want string) {
	if o.ok() && !ok {
		o.failed("field %q: want %s", o.path+name, want)
	}
}

func (o *wireObject) str(name string) string {
	v := o.value(name)
	var s string
	if v != nil && (jsonKind(v) != "a string" || json.Unmarshal(v, &s) != nil) {
		o.wrong(name, "a string", v)
	}
	return s
}

// optionalStr is str for a field the contract may omit ("" then).
func (o *wireObject) optionalStr(name string) string {
	if _, found := o.fields[name]; !found {
		return ""
	}
	return o.str(name)
}

func (o *wireObject) boolean(name string) bool {
	v := o.value(name)
	var b bool
	if v != nil && (jsonKind(v) != "a boolean" || json.Unmarshal(v, &b) != nil) {
		o.wrong(name, "a boolean", v)
	}
	return b
}

// uint reads a non-negative integer. Like the npm client, which cannot tell 7 from 7.0 or
// 7e0, it takes any JSON number with an integral value.
func (o *wireObject) uint(name string) uint64 {
	v := o.value(name)
	if v == nil {
		return 0
	}
	if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
		return n
	}
	if f, ok := integral(v); ok && f >= 0 && f < math.MaxUint64 {
		return uint64(f)
	}
	o.wrong(name, "a non-negative integer", v)
	return 0
}

// int reads an integer; see uint.
func (o *wireObject) int(name string) int64 {
	v := o.value(name)
	if v == nil {
		return 0
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return n
	}
	if f, ok := integral(v); ok && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f)
	}
	o.wrong(name, "an integer", v)
	return 0
}

// integral returns the value of a JSON number that is a whole number.
func integral(v json.RawMessage) (float64, bool) {
	if jsonKind(v) != "a number" {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil && f == math.Trunc(f)
}

func (o *wireObject) time(name string) time.Time {
	v := o.value(name)
	var t time.Time
	if v != nil && (jsonKind(v) != "a string" || json.Unmarshal(v, &t) != nil) {
		o.wrong(name, "an RFC 3339 time", v)
	}
	return t
}

// timeOrNull reads a time the contract allows to be null (nil then).
func (o *wireObject) timeOrNull(name string) *time.Time {
	v := o.value(name)
	if v == nil || jsonKind(v) == "null" {
		return nil
	}
	var t time.Time
	if jsonKind(v) != "a string" || json.Unmarshal(v, &t) != nil {
		o.wrong(name, "an RFC 3339 time or null", v)
		return nil
	}
	return &t
}

// objectOrNull reads an object the contract allows to be null (nil then); its faults are the
// event's.
func (o *wireObject) objectOrNull(name string) *wireObject {
	v := o.value(name)
	if v == nil || jsonKind(v) == "null" {
		return nil
	}
	var fields map[string]json.RawMessage
	if jsonKind(v) != "an object" || json.Unmarshal(v, &fields) != nil {
		o.wrong(name, "an object or null", v)
		return nil
	}
	return &wireObject{fields: fields, path: o.path + name + ".", err: o.err}
}
