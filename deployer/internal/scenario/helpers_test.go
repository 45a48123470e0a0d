package scenario

import (
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/gitrun"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/root"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// The secrets every scenario is configured with; no output may contain them.
const (
	apiKey        = "ptr_scenarioKey0123456789abcdef"
	registryToken = "dckr_pat_scenarioToken0123456789"
	// portainerPassword is the password of the Portainer user of the login scenario.
	portainerPassword = "scenario-Password-0123456789"
)

// recordingRegistry is an in-process registry on 127.0.0.1 that counts the writes (PUT, POST,
// PATCH, DELETE) it receives and, like a registry of public repositories, lets anyone read but
// only the user "pusher" with registryToken write. Its /v2/ challenges go-containerregistry's
// clients (the deployer) for Basic authentication, so that they send the credentials they have;
// the Docker engine, which pulls anonymously here, is not challenged.
type recordingRegistry struct {
	srv    *httptest.Server
	mu     sync.Mutex
	writes []string
}

// startRegistry starts the registry for the rest of the test binary: the Swarm pulls from it
// in every scenario, and the process's end takes it down.
func startRegistry() *recordingRegistry {
	r := &recordingRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, token, hasAuth := req.BasicAuth()
		authorized := hasAuth && user == "pusher" && token == registryToken
		write := req.Method != http.MethodGet && req.Method != http.MethodHead
		if (hasAuth && !authorized) || (write && !authorized) || (req.URL.Path == "/v2/" && !hasAuth && !strings.HasPrefix(req.UserAgent(), "docker/")) {
			w.Header().Set("WWW-Authenticate", `Basic realm="scenario"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if write {
			r.mu.Lock()
			r.writes = append(r.writes, req.Method+" "+req.URL.Path)
			r.mu.Unlock()
		}
		reg.ServeHTTP(w, req)
	}))
	return r
}

// host is HOST:PORT.
func (r *recordingRegistry) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// Writes are the writes so far.
func (r *recordingRegistry) Writes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...)
}

// repoRoot is the repository root: the images' source and deploy/stack.yml.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// transcript collects every output of every scenario, to grep for the secrets at the end.
var transcript struct {
	mu  sync.Mutex
	all bytes.Buffer
}

// result is one command's run.
type result struct {
	out, errOut string
	err         error
	code        int
}

// clock is the deployer's clock: a second later at every call, so that every build has a new
// creation time and so a new digest.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

var testClock = &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}

// run runs `deployer ARGS…` as the binary does, from the repository root, and records its
// output in the transcript.
func run(t *testing.T, args ...string) result {
	t.Helper()
	dir := repoRoot(t)
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Dir: dir, Git: gitrun.Exec{Dir: dir}, Now: testClock.Now}
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		errOut.WriteString("deployer: " + err.Error() + "\n")
	}
	r := result{out: out.String(), errOut: errOut.String(), err: err, code: root.ExitCode(err)}
	transcript.mu.Lock()
	transcript.all.WriteString(strings.Join(args, " ") + "\n" + r.out + r.errOut)
	transcript.mu.Unlock()
	t.Logf("deployer %s → exit %d\n%s%s", strings.Join(args, " "), r.code, r.out, r.errOut)
	return r
}

// settings sets the deployer's variables for the test: the secrets through _FILE variables
// (files in a temporary directory), everything else directly.
func settings(t *testing.T, vars map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "SWARM_LEASE_DEPLOY_") {
			t.Setenv(name, "")
		}
	}
	dir := t.TempDir()
	for name, value := range vars {
		if strings.HasSuffix(name, "_FILE") {
			path := filepath.Join(dir, strings.ToLower(name))
			if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			value = path
		}
		t.Setenv("SWARM_LEASE_DEPLOY_"+name, value)
	}
}

// freePort is a loopback TCP port free at the time of the call, for the demo's published port.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// socketPath is the test Swarm's socket, which the controllers mount.
func socketPath(t *testing.T, host string) string {
	t.Helper()
	p, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		t.Fatalf("%s: the demo's controllers mount the engine's socket, so the test Swarm must be a unix:// socket", host)
	}
	return p
}

// waitFor polls cond every 250 ms until it holds or the timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// services are the names of the stack's services on the Swarm.
func services(t *testing.T, host, stack string) string {
	t.Helper()
	return strings.TrimSpace(leasetest.Docker(t, host, "service", "ls", "--filter", "label=com.docker.stack.namespace="+stack, "--format", "{{.Name}}"))
}

// removeLeftovers removes, at the test's end, what the demo's controllers create beside the
// stack (the lease's anchor service) and the stack's volume, once their containers are gone.
func removeLeftovers(t *testing.T, host, stack string) {
	t.Cleanup(func() {
		// Best effort, and never failing: the test's outcome is already decided.
		docker := func(args ...string) string {
			out, _ := exec.Command("docker", append([]string{"-H", host}, args...)...).Output()
			return string(out)
		}
		docker("stack", "rm", stack)
		// A stopping controller releases the lease and so writes the anchor again: it goes
		// once the containers have.
		deadline := time.Now().Add(time.Minute)
		for strings.TrimSpace(docker("ps", "-aq", "--filter", "label=com.docker.stack.namespace="+stack)) != "" && time.Now().Before(deadline) {
			time.Sleep(500 * time.Millisecond)
		}
		docker("service", "rm", swarmstore.AnchorName(stack+"_controller"))
		for _, v := range strings.Fields(docker("volume", "ls", "-q", "--filter", "label=com.docker.stack.namespace="+stack)) {
			docker("volume", "rm", v)
		}
	})
}

// uniqueName is a stack name of the test's own.
func uniqueName(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
}

// writeCounts are how many writes Portainer and the registry had received at a point.
type writeCounts struct{ portainer, registry int }

// counts are the writes so far.
func counts(fake *portainertest.Server, reg *recordingRegistry) writeCounts {
	return writeCounts{portainer: len(fake.Writes()), registry: len(reg.Writes())}
}

// nothingWritten checks that neither Portainer nor the registry got a write since before.
func nothingWritten(t *testing.T, fake *portainertest.Server, reg *recordingRegistry, before writeCounts) {
	t.Helper()
	if w := fake.Writes(); len(w) != before.portainer {
		t.Errorf("Portainer was written to: %+v", w[before.portainer:])
	}
	if w := reg.Writes(); len(w) != before.registry {
		t.Errorf("the registry was written to: %v", w[before.registry:])
	}
}

// nothingDeployed checks that nothing was written and the stack has no services.
func nothingDeployed(t *testing.T, fake *portainertest.Server, reg *recordingRegistry, before writeCounts, host, stack string) {
	t.Helper()
	nothingWritten(t, fake, reg, before)
	if s := services(t, host, stack); s != "" {
		t.Errorf("services deployed: %s", s)
	}
}
