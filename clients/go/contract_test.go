package swarmlease

import (
	"encoding/json"
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
	data, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatalf("the committed contract: %v", err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	properties := func(schema string) []string {
		s, ok := doc.Components.Schemas[schema]
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
		{reflect.TypeFor[wireRoomState](), []string{"ElectionStatus", "WatchFrame"}, false},
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
