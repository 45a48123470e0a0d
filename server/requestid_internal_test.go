package server

import (
	"net/http/httptest"
	"regexp"
	"testing"
)

// TestRequestIDsAreFreshAndWellFormed: every call gives a new ID of the documented form, set
// in the answer's header, and none repeats.
func TestRequestIDsAreFreshAndWellFormed(t *testing.T) {
	form := regexp.MustCompile(`^req_[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 20000 {
		w := httptest.NewRecorder()
		id := setRequestID(w)
		if !form.MatchString(id) || requestIDOf(w) != id || w.Header().Get(RequestIDHeader) != id {
			t.Fatalf("id %q, header %q", id, w.Header().Get(RequestIDHeader))
		}
		if seen[id] {
			t.Fatalf("id %s given twice", id)
		}
		seen[id] = true
	}
}
