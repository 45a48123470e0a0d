// Package middleware holds the HTTP middleware of the server, one per file, each a
// func(http.Handler) http.Handler (parameterised ones are factories): the request's ID, the
// answer to a panic, CORS and the body limit.
//
// None of them wraps the ResponseWriter: the writer a handler gets is net/http's own, so that an
// SSE stream still flushes and an HTTP/1.1 stream can still be hijacked (package sse). A
// middleware that has to wrap it must keep http.Flusher (and http.Hijacker where it can), with
// a compile-time check.
package middleware
