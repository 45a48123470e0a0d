package portainertest

import (
	"testing"
	"time"
)

// Options configures a fake Portainer.
type Options struct {
	// DockerHost is the engine behind every endpoint, e.g. $SWARM_LEASE_TEST_DOCKER_HOST
	// (unix:// or tcp://). Empty: calls that need the engine (deploys, the Docker passthrough,
	// the external-stack check) answer 500.
	DockerHost string
	// APIKeys are the accepted X-API-Key values.
	APIKeys []string
	// Users maps the accepted user names to their passwords for POST /api/auth.
	Users map[string]string
	// Version is the version the server reports, "2.23.0" by default. Below 2.19 the creation
	// path /api/stacks/create/swarm/string answers 404 (only the older POST /api/stacks
	// works); below 2.17 /api/system/status answers 404 (only /api/status works).
	Version string
	// Endpoints are the environments, by default one {ID: 1, Name: "local", Type: 1}; several
	// may stand for the same engine (as two Portainer environments can).
	Endpoints []Endpoint
	// Now is the clock of the login rate limit (default time.Now).
	Now func() time.Time
}

// Endpoint is one environment of the fake.
type Endpoint struct {
	// ID is the environment's identifier.
	ID int
	// Name is its name.
	Name string
	// Type is Portainer's environment type (1: Docker API).
	Type int
}

// EnvVar is one variable of a stack's environment.
type EnvVar struct {
	// Name is the variable's name.
	Name string `json:"name"`
	// Value is its value.
	Value string `json:"value"`
}

// Stack is one of the fake's stack records.
type Stack struct {
	// ID is the record's identifier.
	ID int
	// Name is the normalised name, the Docker stack namespace.
	Name string
	// Type is 1 (Swarm).
	Type int
	// SwarmID is the cluster ID given at creation.
	SwarmID string
	// EndpointID is the environment the stack belongs to.
	EndpointID int
	// Env is the stored environment.
	Env []EnvVar
	// StackFileContent is the stored stack file.
	StackFileContent string
}

// Request is one state-changing call the fake received (any method but GET/HEAD/OPTIONS),
// whatever its outcome.
type Request struct {
	// Method is the HTTP method.
	Method string
	// Path is the URL path, e.g. /api/stacks/create/swarm/string.
	Path string
	// Query is the raw query, e.g. endpointId=1.
	Query string
	// Status is the status the fake answered.
	Status int
}

// Server is a running fake Portainer.
type Server struct{}

// Start starts a fake Portainer on a loopback port. The test's cleanup stops it and removes,
// from the engine, the stacks it created that remain.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	t.Fatal("portainertest: not implemented yet")
	return nil
}

// URL is the server's base address (http://127.0.0.1:PORT); the API is under /api.
func (s *Server) URL() string { return "" }

// Writes returns every state-changing call received so far, in order. A dry run must leave it
// empty.
func (s *Server) Writes() []Request { return nil }

// Stacks returns a copy of the stack records, by ID.
func (s *Server) Stacks() []Stack { return nil }

// ExpireTokens invalidates every JWT issued so far, as their 8-hour lifetime running out
// would: the next Bearer request gets 401.
func (s *Server) ExpireTokens() {}

// Stop takes the server down ("Portainer is down"): later requests get connection refused. The
// stacks stay deployed until the test's cleanup.
func (s *Server) Stop() {}
