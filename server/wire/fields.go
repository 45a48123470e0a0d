package wire

import "github.com/go-json-experiment/json/jsontext"

// FieldDecoder is implemented by request bodies that DecodeFast fills without reflection: a JSON
// object of at most eight known fields, each a string or a number. Null is absent and never
// passed; any other field or kind sends the body to the strict path.
type FieldDecoder interface {
	// Fields names the body's fields by their exact wire names; SetField's i is a position in it.
	Fields() []string
	// Reset sets the body to its zero value, as encoding/json starts from.
	Reset()
	// SetField sets the field i from a JSON string ('"', text unquoted) or number ('0', its
	// text), and reports whether it could.
	SetField(i int, kind jsontext.Kind, text string) bool
}

// fieldIndex is the position of the field of that exact name in fields, or -1. (A comparison,
// not a map: reading a name costs no allocation.)
func fieldIndex(fields []string, name string) int {
	for i, f := range fields {
		if name == f {
			return i
		}
	}
	return -1
}
