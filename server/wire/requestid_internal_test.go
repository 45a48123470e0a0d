package wire

import (
	"net/http"
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
		id := SetRequestID(w)
		if !form.MatchString(id) || RequestIDOf(w) != id || w.Header().Get(RequestIDHeader) != id {
			t.Fatalf("id %q, header %q", id, w.Header().Get(RequestIDHeader))
		}
		if seen[id] {
			t.Fatalf("id %s given twice", id)
		}
		seen[id] = true
	}
}

// TestRequestIDHeadersAreTheirOwn: appending to one request's ID header, as Header.Add does,
// changes no other request's: IDs handed out one after the other share their storage.
func TestRequestIDHeadersAreTheirOwn(t *testing.T) {
	a, b := httptest.NewRecorder(), httptest.NewRecorder()
	idA, idB := SetRequestID(a), SetRequestID(b)
	a.Header().Add(RequestIDHeader, "added")
	if got := b.Header()[RequestIDHeader]; len(got) != 1 || got[0] != idB {
		t.Fatalf("the second request's header is %q after the first's was appended to, want [%s]", got, idB)
	}
	if got := a.Header()[RequestIDHeader]; len(got) != 2 || got[0] != idA {
		t.Fatalf("the first request's header is %q, want [%s added]", got, idA)
	}
	w := headerOnly{http.Header{}}
	if n := testing.AllocsPerRun(1000, func() { clear(w.h); SetRequestID(w) }); n >= 1 {
		t.Errorf("%.2f allocations per ID, want less than one", n)
	}
}

// headerOnly is a ResponseWriter of a header alone, reused: an ID's own allocations alone.
type headerOnly struct{ h http.Header }

func (w headerOnly) Header() http.Header       { return w.h }
func (headerOnly) Write(b []byte) (int, error) { return len(b), nil }
func (headerOnly) WriteHeader(int)             {}

// TestRequestIDHeaderIsCanonical: the request id is set under its key directly, without
// http.Header.Set's canonicalisation, so the key must be canonical already.
func TestRequestIDHeaderIsCanonical(t *testing.T) {
	if c := http.CanonicalHeaderKey(RequestIDHeader); c != RequestIDHeader {
		t.Fatalf("RequestIDHeader %q is not canonical (%q)", RequestIDHeader, c)
	}
}
