package middleware

import "net/http"

// BodyLimit bounds every request body to limit bytes: a handler reading past it gets an
// *http.MaxBytesError (huma's answer is a 413, see wire.InstallErrorModel).
func BodyLimit(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			next.ServeHTTP(w, r)
		})
	}
}
