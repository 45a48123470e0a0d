package portainertest

import (
	"cmp"
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

// maxPayload bounds a request body the fake reads.
const maxPayload = 16 << 20

// decodePayload decodes r's JSON body into v (field names match case-insensitively, as in
// Portainer), answering 400 itself when it cannot.
func decodePayload(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPayload)).Decode(v); err != nil {
		invalidPayload(w, err.Error())
		return false
	}
	return true
}

// invalidPayload answers Portainer's 400 for a request body that fails validation.
func invalidPayload(w http.ResponseWriter, details string) {
	writeError(w, http.StatusBadRequest, "Invalid request payload", details)
}

// routeNotFound answers like a route the server does not have (Go's and gorilla/mux's plain
// text 404).
func routeNotFound(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }

// statusRecorder remembers the status a handler answered, for Writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader notes the first status and passes it on.
func (r *statusRecorder) WriteHeader(status int) {
	r.status = cmp.Or(r.status, status)
	r.ResponseWriter.WriteHeader(status)
}

// Write notes an implicit 200 and passes the bytes on.
func (r *statusRecorder) Write(b []byte) (int, error) {
	r.status = cmp.Or(r.status, http.StatusOK)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController (which the Docker passthrough's reverse proxy flushes
// through) reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
