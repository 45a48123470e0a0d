package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-json-experiment/json/jsontext"
)

// Decode is the API's one reader of JSON request bodies: huma's Unmarshal, and through its
// first part, DecodeFast, the elections fast path's. Bodies are checked before encoding/json
// reads them, because it lets through silently what the contract refuses: a duplicated key (it
// keeps the last, so two readers of one body may disagree about the candidate), invalid UTF-8
// (it substitutes U+FFFD, so refused metadata would be stored altered) and unpaired surrogate
// escapes. Its errors are rewritten to name the field and the JSON type it wants, never a Go
// type ("json: cannot unmarshal number into Go struct field ... of type string"). Bodies that
// DecodeFast (fastjson.go) decodes alike are read once, by it.
func Decode(data []byte, v any) error {
	if DecodeFast(data, v) {
		return nil
	}
	if err := checkJSON(data); err != nil {
		return err
	}
	return wireError("", json.Unmarshal(data, v))
}

// Marshal is huma's default JSON encoder (no HTML escaping), for the answers that are not
// written by hand.
func Marshal(w io.Writer, v any) error { return huma.DefaultJSONFormat.Marshal(w, v) }

// ExactFields decodes a JSON object's fields by their exact names, for the UnmarshalJSON of
// request bodies: encoding/json would also match "CANDIDATE_ID" to candidate_id, and the
// contract ignores unknown fields — of which differently-cased names are some. JSON null counts
// as absent. Its errors name the field.
func ExactFields(b []byte, fields map[string]any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for name, dst := range fields {
		v, ok := raw[name]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, dst); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return wireError(name, err)
			}
			return fmt.Errorf("%s: %v", name, err)
		}
	}
	return nil
}

// checkJSON reads every token of data with jsontext, whose defaults refuse duplicate names,
// invalid UTF-8 and unpaired surrogates; it also refuses numbers beyond float64, which
// encoding/json reports without their field. Its messages name the field but repeat no part
// of the body other than a short key.
func checkJSON(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return syntaxError(err)
		}
		if tok.Kind() == '0' {
			if _, err := strconv.ParseFloat(tok.String(), 64); err != nil {
				return fmt.Errorf("%s: the number is out of range", fieldPath(dec.StackPointer()))
			}
		}
	}
}

// syntaxError words a jsontext error.
func syntaxError(err error) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("malformed JSON: the body ends inside a value")
		}
		return errors.New("malformed JSON")
	}
	if errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return fmt.Errorf("duplicate key %s: send each field once", quoteKey(se.JSONPointer.LastToken()))
	}
	var why string
	switch msg := se.Err.Error(); {
	case strings.Contains(msg, "UTF-8"), strings.Contains(msg, "surrogate"):
		why = "not valid UTF-8 (or an unpaired surrogate escape)"
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		why = "the body ends inside a value"
	default:
		why = fmt.Sprintf("invalid syntax at byte %d", se.ByteOffset)
	}
	if se.JSONPointer == "" {
		return fmt.Errorf("malformed JSON: %s", why)
	}
	return fmt.Errorf("%s: malformed JSON: %s", fieldPath(se.JSONPointer), why)
}

// maxEchoedKey: longer keys are not repeated in errors, since a key may be a misplaced token
// (43 characters) and errors never carry tokens.
const maxEchoedKey = 32

func quoteKey(k string) string {
	if len(k) > maxEchoedKey {
		return fmt.Sprintf("(a key of %d bytes)", len(k))
	}
	return fmt.Sprintf("%q", k)
}

// fieldPath names the value at p ("metadata", "a/0"), eliding long keys like quoteKey.
func fieldPath(p jsontext.Pointer) string {
	var parts []string
	for tok := range p.Tokens() {
		if len(tok) > maxEchoedKey {
			tok = "…"
		}
		parts = append(parts, tok)
	}
	return strings.Join(parts, "/")
}

// wireError rewrites an encoding/json error of the value at field ("" for the body) in JSON's
// terms. Other errors (the request bodies' own UnmarshalJSON methods') pass unchanged.
func wireError(field string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		if te.Field != "" {
			field = te.Field
		}
		got, _, _ := strings.Cut(te.Value, " ") // "number 1e400" → "number"
		if field == "" {
			return fmt.Errorf("the body must be %s, not %s", jsonKind(te.Type), withArticle(got))
		}
		if got == "number" && isNumeric(te.Type) {
			return fmt.Errorf("%s: the number is out of range", field)
		}
		return fmt.Errorf("%s: want %s, not %s", field, jsonKind(te.Type), withArticle(got))
	case errors.As(err, &se):
		return fmt.Errorf("malformed JSON at byte %d", se.Offset)
	}
	return err
}

func isNumeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// jsonKind is the JSON type that decodes into t, with its article.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Interface:
		return "a JSON value"
	}
	if isNumeric(t) {
		return "an integer"
	}
	return "another JSON type"
}

// withArticle: "number" → "a number", "object" → "an object".
func withArticle(kind string) string {
	switch kind {
	case "object", "array":
		return "an " + kind
	case "bool":
		return "true or false"
	case "":
		return "this value"
	}
	return "a " + kind
}
