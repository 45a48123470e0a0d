package swarmlease

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestWireTypesMatchTheContract checks the client's JSON types against the server's committed
// OpenAPI contract (../openapi.json, which the server's own test keeps equal to what the server
// generates): a field the client reads must exist in the schema it decodes, and where the
// client mirrors a whole schema, it must have every property. This module cannot import the
// server, so the contract file is the link between the two.
func TestWireTypesMatchTheContract(t *testing.T) {
	schemas := contractSchemas(t)
	properties := func(schema string) []string {
		s, ok := schemas[schema]
		if !ok {
			t.Fatalf("the contract has no schema %s", schema)
		}
		var names []string
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		return names
	}
	for _, tc := range []struct {
		goType  reflect.Type
		schemas []string // the client decodes one of these into the type
		whole   bool     // the type mirrors the schema: every property
	}{
		{reflect.TypeFor[State](), []string{"State"}, true},
		{reflect.TypeFor[Room](), []string{"CreatedElection"}, true},
		{reflect.TypeFor[Leader](), []string{"ElectionLeader"}, true},
		{reflect.TypeFor[wireRoomState](), []string{"ElectionStatus"}, true},
		{reflect.TypeFor[wireError](), []string{"ErrorBody"}, true},
	} {
		fields := jsonFields(tc.goType)
		var union []string
		for _, schema := range tc.schemas {
			props := properties(schema)
			union = append(union, props...)
			if tc.whole && !slices.Equal(fields, props) {
				t.Errorf("%s has fields %v; schema %s has %v", tc.goType, fields, schema, props)
			}
		}
		for _, f := range fields {
			if !slices.Contains(union, f) {
				t.Errorf("%s reads %q, which none of %v has", tc.goType, f, tc.schemas)
			}
		}
	}
}

// contractSchemas are the schemas of the committed contract (../openapi.json): their
// properties and required lists.
func contractSchemas(t *testing.T) map[string]struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
} {
	t.Helper()
	data, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatalf("the committed contract: %v", err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas
}

// TestEventDecodersRequireTheContract ties the watches' decoders to the contract: an event with
// every property of its schema decodes; without a required one it is refused, naming it; without
// an optional one it still decodes. The examples must have every property of the schema, so a
// property the contract adds fails here until the decoder knows it.
func TestEventDecodersRequireTheContract(t *testing.T) {
	schemas := contractSchemas(t)
	decodeFrame := func(data []byte) error { _, err := roomFrameDecoder(testRoom)(data); return err }
	for _, tc := range []struct {
		schema  string
		example map[string]any
		// wrap puts an object of the schema into an event; decode is that event's decoder.
		wrap   func(m map[string]any) map[string]any
		decode func(data []byte) error
		prefix string
	}{
		{"State", validState(), nil, func(data []byte) error { _, err := decodeState(data); return err }, ""},
		{"WatchFrame", validFrame(), nil, decodeFrame, ""},
		{"ElectionLeader", validFrame()["leader"].(map[string]any),
			func(m map[string]any) map[string]any { f := validFrame(); f["leader"] = m; return f }, decodeFrame, "leader."},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			s, ok := schemas[tc.schema]
			if !ok {
				t.Fatalf("the contract has no schema %s", tc.schema)
			}
			props := slices.Sorted(maps.Keys(s.Properties))
			if got := slices.Sorted(maps.Keys(tc.example)); !slices.Equal(got, props) {
				t.Fatalf("the example has %v; the schema has %v", got, props)
			}
			event := func(m map[string]any) []byte {
				if tc.wrap != nil {
					m = tc.wrap(m)
				}
				data, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				return data
			}
			if err := tc.decode(event(tc.example)); err != nil {
				t.Fatalf("the example: %v", err)
			}
			for _, p := range props {
				m := maps.Clone(tc.example)
				delete(m, p)
				err := tc.decode(event(m))
				if !slices.Contains(s.Required, p) {
					if err != nil {
						t.Errorf("without the optional %q: %v", p, err)
					}
				} else if want := fmt.Sprintf("field %q: missing", tc.prefix+p); err == nil || err.Error() != want {
					t.Errorf("without the required %q: %v, want %q", p, err, want)
				}
			}
		})
	}
}

// jsonFields returns the sorted JSON names of a struct type's fields.
func jsonFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
