package portainertest

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
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
	// Now is the clock of the login rate limit and the records' dates (default time.Now).
	Now func() time.Time
	// Environment is Portainer's own process environment, which `docker stack deploy` runs
	// with, the stack's Env added (default: the test process's, os.Environ()).
	Environment []string
	// Stacks are records the server starts with, as a Portainer database from earlier would
	// hold them: nothing of them is deployed. IDs must be unique; new records get higher ones.
	Stacks []Stack
	// Echo, when set, quotes every failed request in its answer, as no real Portainer does
	// (a proxy before it might): for the tests of what the deployer prints of an answer.
	Echo *Echo
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
	// CreatedBy and UpdatedBy are the users (or API keys' users) of the calls.
	CreatedBy string
	// UpdatedBy is the user of the last update ("" before one).
	UpdatedBy string
	// CreationDate and UpdateDate are Unix seconds.
	CreationDate int64
	// UpdateDate is the last update's time (0 before one).
	UpdateDate int64
}

// Request is one state-changing call the fake received — any method but GET, HEAD and
// OPTIONS, except logins (POST /api/auth), which change nothing — whatever its outcome.
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
type Server struct {
	t          testing.TB
	dir        string // the stack files of the deploys
	http       *httptest.Server
	engine     *engine
	version    *semver.Version
	instanceID string
	now        func() time.Time
	apiKeys    []string
	users      map[string]string
	endpoints  []Endpoint
	quote      *Echo
	stopOnce   sync.Once

	mu      sync.Mutex
	writes  []Request
	stacks  map[int]*Stack
	nextID  int
	created map[string]bool // names of the stacks this server deployed, for the cleanup
	logins  loginLimiter
	tokens  map[string]string // JWT → user
	issued  int               // logins that issued a JWT
}

// defaultVersion is the version a fake reports unless told otherwise.
const defaultVersion = "2.23.0"

// Start starts a fake Portainer on a loopback port. The test's cleanup stops it and removes,
// from the engine, the stacks it created that remain.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	o.Version = cmp.Or(o.Version, defaultVersion)
	version, err := semver.NewVersion(o.Version)
	if err != nil {
		t.Fatalf("portainertest: Options.Version %q: %v", o.Version, err)
	}
	if o.Endpoints == nil {
		o.Endpoints = []Endpoint{{ID: 1, Name: "local", Type: 1}}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Environment == nil {
		o.Environment = os.Environ()
	}
	s := &Server{
		t:          t,
		dir:        t.TempDir(),
		engine:     newEngine(o.DockerHost, o.Environment),
		version:    version,
		instanceID: randomHex(16),
		now:        o.Now,
		apiKeys:    slices.Clone(o.APIKeys),
		users:      o.Users,
		endpoints:  slices.Clone(o.Endpoints),
		quote:      o.Echo,
		stacks:     map[int]*Stack{},
		nextID:     1,
		created:    map[string]bool{},
		tokens:     map[string]string{},
		logins:     loginLimiter{banned: map[string]time.Time{}, recent: map[string][]time.Time{}},
	}
	for _, st := range o.Stacks {
		c := st
		c.Env = slices.Clone(st.Env)
		s.stacks[c.ID] = &c
		s.nextID = max(s.nextID, c.ID+1)
	}
	s.http = httptest.NewServer(s.routes())
	t.Cleanup(s.cleanup)
	return s
}

// URL is the server's base address (http://127.0.0.1:PORT); the API is under /api.
func (s *Server) URL() string { return s.http.URL }

// Writes returns every state-changing call received so far, in order. A dry run must leave it
// empty.
func (s *Server) Writes() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.writes)
}

// Stacks returns a copy of the stack records, by ID.
func (s *Server) Stacks() []Stack {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Stack, 0, len(s.stacks))
	for _, st := range s.stacks {
		c := *st
		c.Env = slices.Clone(st.Env)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Stack) int { return a.ID - b.ID })
	return out
}

// Logins is how many logins (POST /api/auth) succeeded: a client that logs in once per process
// and again only on 401 keeps it small.
func (s *Server) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// ExpireTokens invalidates every JWT issued so far, as their 8-hour lifetime running out
// would: the next Bearer request gets 401.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]string{}
}

// Stop takes the server down ("Portainer is down"): later requests get connection refused. The
// stacks stay deployed until the test's cleanup.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.http.Close()
	})
}

// cleanup stops the server and removes the stacks it deployed that still have a record.
func (s *Server) cleanup() {
	s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stacks {
		if !s.created[st.Name] {
			continue
		}
		if out, err := s.engine.stackRemove(st.Name); err != nil {
			s.t.Errorf("portainertest: cleanup: docker stack rm %s: %v\n%s", st.Name, err, out)
		}
	}
}

// record notes a state-changing call for Writes.
func (s *Server) record(r *http.Request, status int) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return
	}
	if r.URL.Path == "/api/auth" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: status})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
