package portainertest

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/Masterminds/semver/v3"
)

// The versions at which the API moved: /api/system/status appeared in 2.17 and the typed stack
// creation paths in 2.19.
var (
	systemStatusSince = semver.MustParse("2.17.0")
	createPathSince   = semver.MustParse("2.19.0")
)

// routes is the fake's API: the CSRF check first (it applies to every request carrying the
// login cookie), then the public calls and the authenticated ones.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/system/status", func(w http.ResponseWriter, r *http.Request) {
		if s.version.LessThan(systemStatusSince) {
			routeNotFound(w, r)
			return
		}
		s.status(w, r)
	})
	mux.HandleFunc("GET /api/status", s.status)
	mux.HandleFunc("POST /api/auth", s.login)
	mux.HandleFunc("GET /api/endpoints", s.authenticated(s.listEndpoints))
	mux.HandleFunc("GET /api/endpoints/{id}", s.authenticated(s.getEndpoint))
	mux.HandleFunc("GET /api/endpoints/{id}/docker/{path...}", s.authenticated(s.dockerPassthrough))
	mux.HandleFunc("GET /api/stacks", s.authenticated(s.listStacks))
	mux.HandleFunc("GET /api/stacks/{id}", s.authenticated(s.getStack))
	mux.HandleFunc("GET /api/stacks/{id}/file", s.authenticated(s.getStackFile))
	mux.HandleFunc("POST /api/stacks/create/swarm/string", func(w http.ResponseWriter, r *http.Request) {
		if s.version.LessThan(createPathSince) {
			routeNotFound(w, r)
			return
		}
		s.authenticated(s.createStack)(w, r)
	})
	mux.HandleFunc("POST /api/stacks", s.authenticated(s.createStackDeprecated))
	mux.HandleFunc("PUT /api/stacks/{id}", s.authenticated(s.updateStack))
	mux.HandleFunc("DELETE /api/stacks/{id}", s.authenticated(s.deleteStack))
	var recorded http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		csrf(mux).ServeHTTP(rec, r)
		s.record(r, rec.status)
	})
	if s.quote != nil {
		recorded = s.echo(recorded)
	}
	return recorded
}

// status is GET /api/system/status (and the older /api/status).
func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"Version": s.version.Original(), "InstanceID": s.instanceID})
}

// endpointJSON is an environment as Portainer answers it.
type endpointJSON struct {
	ID     int    `json:"Id"`
	Name   string `json:"Name"`
	Type   int    `json:"Type"`
	URL    string `json:"URL"`
	Status int    `json:"Status"`
}

func (s *Server) endpointJSON(ep Endpoint) endpointJSON {
	return endpointJSON{ID: ep.ID, Name: ep.Name, Type: ep.Type, URL: s.engine.host, Status: 1}
}

// listEndpoints is GET /api/endpoints[?name=N]: the name filter is exact.
func (s *Server) listEndpoints(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	out := []endpointJSON{}
	for _, ep := range s.endpoints {
		if name == "" || ep.Name == name {
			out = append(out, s.endpointJSON(ep))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// getEndpoint is GET /api/endpoints/{id}.
func (s *Server) getEndpoint(w http.ResponseWriter, r *http.Request) {
	if ep, ok := s.endpointOf(w, r.PathValue("id"), "Invalid environment identifier route variable"); ok {
		writeJSON(w, http.StatusOK, s.endpointJSON(ep))
	}
}

// dockerPassthrough is GET /api/endpoints/{id}/docker/{path...}.
func (s *Server) dockerPassthrough(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.endpointOf(w, r.PathValue("id"), "Invalid environment identifier route variable"); ok {
		s.engine.passthrough(w, r, r.PathValue("path"))
	}
}

// endpointOf resolves an endpoint ID from a route variable or a query parameter, answering the
// error itself (400 with invalid, 404) when it cannot.
func (s *Server) endpointOf(w http.ResponseWriter, raw, invalid string) (Endpoint, bool) {
	id, err := strconv.Atoi(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, invalid, err.Error())
		return Endpoint{}, false
	}
	ep, ok := s.endpoint(id)
	if !ok {
		writeError(w, http.StatusNotFound, "Unable to find an environment with the specified identifier inside the database", notInDatabase("endpoints", id))
	}
	return ep, ok
}

// endpoint is the environment id, if there is one.
func (s *Server) endpoint(id int) (Endpoint, bool) {
	for _, ep := range s.endpoints {
		if ep.ID == id {
			return ep, true
		}
	}
	return Endpoint{}, false
}

// notInDatabase is the details of Portainer's 404s: its database's error for a missing key of
// a bucket.
func notInDatabase(bucket string, key int) string {
	return fmt.Sprintf("Object not found inside the database (bucket=%s, key=%d)", bucket, key)
}
