package middleware_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/regbo/lfp-swarm-lease/server/middleware"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// TestRecovererAnswersInTheErrorShape: a panic behind RequestID and Recoverer is a 500 in the
// one error shape, naming the ID the answer's header carries; http.ErrAbortHandler still aborts.
func TestRecovererAnswersInTheErrorShape(t *testing.T) {
	chain := func(v any) http.Handler {
		return middleware.RequestID(middleware.Recoverer(slog.New(slog.DiscardHandler))(
			http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(v) })))
	}
	w := httptest.NewRecorder()
	chain("boom").ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	var body wire.ErrorBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if id := w.Header().Get(wire.RequestIDHeader); w.Code != http.StatusInternalServerError || body.Code != "internal_error" ||
		id == "" || body.RequestID != id || body.Details != "see the server log for "+id {
		t.Fatalf("%d %s (header id %q)", w.Code, w.Body, id)
	}
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler again", v)
		}
	}()
	chain(http.ErrAbortHandler).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}
