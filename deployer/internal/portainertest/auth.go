package portainertest

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The login cookie, the CSRF failure Portainer (gorilla/csrf) answers to a write that carries
// the cookie without the X-CSRF-Token header, the header its 2xx answers carry the token in,
// and its refusal of a request that carries both an API key and an Authorization header.
const (
	loginCookie     = "portainer_api_key"
	csrfHeader      = "X-CSRF-Token"
	csrfFailure     = "Forbidden - CSRF token not found in request"
	bothCredentials = "api key and auth header are not allowed at the same time"
)

// unauthorized is the details of Portainer's 401 answers (its httperrors.ErrUnauthorized).
const unauthorized = "Unauthorized"

// Portainer bans an address for an hour after more than maxLoginsPerSecond logins in a second.
const (
	maxLoginsPerSecond = 10
	loginBan           = time.Hour
)

// loginLimiter keeps the recent logins and the bans, per remote address (guarded by Server.mu).
type loginLimiter struct {
	recent map[string][]time.Time
	banned map[string]time.Time // address → end of the ban
}

// allow records a login from addr at now and reports whether it may proceed.
func (l *loginLimiter) allow(addr string, now time.Time) bool {
	if until, ok := l.banned[addr]; ok && now.Before(until) {
		return false
	}
	window := now.Add(-time.Second)
	recent := slices.DeleteFunc(l.recent[addr], func(t time.Time) bool { return !t.After(window) })
	recent = append(recent, now)
	l.recent[addr] = recent
	if len(recent) > maxLoginsPerSecond {
		l.banned[addr] = now.Add(loginBan)
		return false
	}
	return true
}

// userKey carries the authenticated user in a request's context.
type userKey struct{}

// authenticated wraps the routes that need credentials: an API key (looked up first, as
// Portainer does) or a JWT. A request carrying both never gets here (see csrf).
func (s *Server) authenticated(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		apiKey := r.Header.Get("X-API-Key")
		authorization := r.Header.Get("Authorization")
		var user string
		switch {
		case apiKey != "":
			if !slices.Contains(s.apiKeys, apiKey) {
				writeError(w, http.StatusUnauthorized, "Invalid JWT token", unauthorized)
				return
			}
			user = "admin"
		case authorization != "":
			token, ok := strings.CutPrefix(authorization, "Bearer ")
			s.mu.Lock()
			user = s.tokens[token]
			s.mu.Unlock()
			if !ok || user == "" {
				writeError(w, http.StatusUnauthorized, "Invalid JWT token", unauthorized)
				return
			}
		default:
			writeError(w, http.StatusUnauthorized, "A valid authorisation token is missing", unauthorized)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	}
}

// userOf is the user authenticated for r.
func userOf(r *http.Request) string {
	user, _ := r.Context().Value(userKey{}).(string)
	return user
}

// csrf is Portainer's CSRF middleware, in front of every route: a request carrying the login
// cookie is a browser session's, and a write (any method but GET, HEAD, OPTIONS and TRACE) of
// it without the X-CSRF-Token header is refused in plain text; a request without the cookie
// skips the check, unless it carries both an API key and an Authorization header, which is
// refused — on every route, the public ones too. Every 2xx answer carries a CSRF token in the
// X-CSRF-Token header, as gorilla/csrf's does.
func csrf(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := r.Cookie(loginCookie); err == nil {
			if !safeMethod(r.Method) && r.Header.Get(csrfHeader) == "" {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(csrfFailure + "\n"))
				return
			}
		} else if r.Header.Get("X-API-Key") != "" && r.Header.Get("Authorization") != "" {
			writeError(w, http.StatusForbidden, bothCredentials, bothCredentials)
			return
		}
		next.ServeHTTP(&tokenWriter{ResponseWriter: w}, r)
	})
}

// safeMethod is a method gorilla/csrf lets through without a token.
func safeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// tokenWriter adds a CSRF token to a 2xx answer.
type tokenWriter struct {
	http.ResponseWriter
	wrote bool
}

// WriteHeader adds the token to a 2xx answer's headers and writes them.
func (t *tokenWriter) WriteHeader(status int) {
	if !t.wrote && status >= 200 && status <= 299 {
		t.Header().Set(csrfHeader, randomHex(32))
	}
	t.wrote = true
	t.ResponseWriter.WriteHeader(status)
}

// Write writes an implicit 200's headers first.
func (t *tokenWriter) Write(b []byte) (int, error) {
	if !t.wrote {
		t.WriteHeader(http.StatusOK)
	}
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController (which the Docker passthrough's reverse proxy flushes
// through) reach the underlying writer.
func (t *tokenWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// login is POST /api/auth: {"Username","Password"} → {"jwt"}, plus the session cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	s.mu.Lock()
	allowed := s.logins.allow(addr, s.now())
	s.mu.Unlock()
	if !allowed {
		writeError(w, http.StatusForbidden, "Access denied", "")
		return
	}
	var body struct {
		Username string
		Password string
	}
	if !decodePayload(w, r, &body) {
		return
	}
	switch {
	case body.Username == "":
		invalidPayload(w, "Invalid username")
		return
	case body.Password == "":
		invalidPayload(w, "Invalid password")
		return
	}
	password, known := s.users[body.Username]
	if !known || password != body.Password {
		writeError(w, http.StatusUnprocessableEntity, "Invalid credentials", "Unauthorized")
		return
	}
	token := newJWT()
	s.mu.Lock()
	s.tokens[token] = body.Username
	s.issued++
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]string{"jwt": token})
}

// newJWT returns an opaque token shaped like a JWT (the fake checks it by lookup).
func newJWT() string {
	return "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + randomHex(24) + "." + randomHex(32)
}
