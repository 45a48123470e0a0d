package portainertest

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The login cookie and the CSRF failure Portainer (gorilla/csrf) answers to a request that
// carries the cookie without the X-CSRF-Token header.
const (
	loginCookie = "portainer_api_key"
	csrfHeader  = "X-CSRF-Token"
	csrfFailure = "Forbidden - CSRF token not found in request"
)

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

// authenticated wraps the routes that need credentials: an API key or a JWT, never both.
func (s *Server) authenticated(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		apiKey := r.Header.Get("X-API-Key")
		authorization := r.Header.Get("Authorization")
		var user string
		switch {
		case apiKey != "" && authorization != "":
			writeError(w, http.StatusForbidden, "Access denied", "a request may carry an API key or a JWT, not both")
			return
		case apiKey != "":
			if !slices.Contains(s.apiKeys, apiKey) {
				writeError(w, http.StatusUnauthorized, "Invalid JWT token", "")
				return
			}
			user = "admin"
		case authorization != "":
			token, ok := strings.CutPrefix(authorization, "Bearer ")
			s.mu.Lock()
			user = s.tokens[token]
			s.mu.Unlock()
			if !ok || user == "" {
				writeError(w, http.StatusUnauthorized, "Invalid JWT token", "")
				return
			}
		default:
			writeError(w, http.StatusUnauthorized, "A valid authorisation token is missing", "Unauthorized")
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

// csrf refuses any request that carries the login cookie without a CSRF token, as Portainer
// does: only a browser session uses the cookie, and it must send the token too.
func csrf(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := r.Cookie(loginCookie); err == nil && r.Header.Get(csrfHeader) == "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(csrfFailure + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

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
