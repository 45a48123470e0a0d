package portainertest

import (
	"encoding/json"
	"net/http"
)

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers Portainer's handler error shape {"message","details"}.
func writeError(w http.ResponseWriter, status int, message, details string) {
	writeJSON(w, status, struct {
		Message string `json:"message"`
		Details string `json:"details,omitempty"`
	}{message, details})
}

// routeNotFound answers like a route the server does not have (Go's and gorilla/mux's plain
// text 404).
func routeNotFound(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }

// statusRecorder remembers the status a handler answered, for Writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}
