package rooms

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRoomSetActsAsAMap: through random sets and deletes, a room set holds what a map given the
// same changes holds, in id order, and a clone taken on the way is changed by neither side's
// later changes.
func TestRoomSetActsAsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var s roomSet
	want := map[string]roomEntry{}
	var snap roomSet
	var snapWant map[string]roomEntry
	check := func(s *roomSet, want map[string]roomEntry, what string) {
		t.Helper()
		if s.len() != len(want) {
			t.Fatalf("%s: %d rooms, want %d", what, s.len(), len(want))
		}
		got := maps.Collect(s.all())
		if !maps.Equal(got, want) {
			t.Fatalf("%s: rooms %v, want %v", what, got, want)
		}
		ids := slices.Collect(maps.Keys(got))
		slices.Sort(ids)
		var order []string
		for id := range s.all() {
			order = append(order, id)
		}
		if !slices.Equal(order, ids) {
			t.Fatalf("%s: order %v, want %v", what, order, ids)
		}
		for id, e := range want {
			if g, ok := s.get(id); !ok || g != e {
				t.Fatalf("%s: get(%s) = %v, %v; want %v", what, id, g, ok, e)
			}
		}
		if _, ok := s.get("room-none"); ok {
			t.Fatalf("%s: a room never set is found", what)
		}
	}
	for step := range 2000 {
		id := fmt.Sprintf("room-%02d", rng.IntN(24))
		if rng.IntN(3) == 0 {
			s.delete(id)
			delete(want, id)
		} else {
			e := roomEntry{Candidate: "c", Term: uint64(step + 1)}
			s.set(id, e)
			want[id] = e
		}
		check(&s, want, fmt.Sprintf("step %d", step))
		if step%100 == 0 {
			if snapWant != nil {
				check(&snap, snapWant, fmt.Sprintf("clone before step %d", step))
			}
			snap, snapWant = s.clone(), maps.Clone(want)
		}
	}
}

// TestRoomSetEncodesAsAMap: a room set encodes as encoding/json encodes a map of its rooms —
// under an encoder that escapes HTML and one that does not — and decodes as a map does.
func TestRoomSetEncodesAsAMap(t *testing.T) {
	var s roomSet
	m := map[string]roomEntry{}
	for i, meta := range []string{"", "a < b & c > d", "é\u2028", `"q"\`} {
		id, e := fmt.Sprintf("room-%d-%s", 9-i, strings.Repeat("x", i)), roomEntry{Candidate: "c", Metadata: meta, Term: uint64(i + 1)}
		s.set(id, e)
		m[id] = e
	}
	for _, html := range []bool{true, false} {
		got, want := encodeWith(t, html, s), encodeWith(t, html, m)
		if got != want {
			t.Errorf("escaping HTML %v:\n got %s\nwant %s", html, got, want)
		}
	}
	var back roomSet
	if err := json.Unmarshal([]byte(encodeWith(t, false, m)), &back); err != nil {
		t.Fatal(err)
	}
	if got := maps.Collect(back.all()); !maps.Equal(got, m) {
		t.Errorf("decoded %v, want %v", got, m)
	}
	if err := json.Unmarshal([]byte(`{"room-b":{"t":1},"room-a":{"t":2},"room-b":{"t":3}}`), &back); err != nil {
		t.Fatal(err)
	}
	if b, _ := back.get("room-b"); back.len() != 2 || b.Term != 3 {
		t.Errorf("a key given twice: %v, want the last one", maps.Collect(back.all()))
	}
	if err := json.Unmarshal([]byte(`null`), &back); err != nil || back.len() != 0 {
		t.Errorf("null: %v rooms, %v", back.len(), err)
	}
}

func encodeWith(t *testing.T, html bool, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
