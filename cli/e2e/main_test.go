package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// binary is the lfp-swarm-lease built once for these tests: every contender is a separate
// process, as in production.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lfp-swarm-lease-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "lfp-swarm-lease")
	if out, err := exec.Command("go", "build", "-o", binary, "../cmd/lfp-swarm-lease").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one finished command.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the binary with a clean environment plus env.
func cli(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return cliIn(t, "", env, args...)
}

// cliIn runs the binary in the working directory dir ("" for the test's) with a clean
// environment plus env.
func cliIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container"}, env...)
	return runCommand(t, cmd)
}

// runCommand runs cmd to its end and returns its exit code and output.
func runCommand(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func expectCode(t *testing.T, r result, want int, what string) {
	t.Helper()
	if r.code != want {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, want, r.stdout, r.stderr)
	}
}

// tryAcquireOut and inspectOut are the --json output of try-acquire and of inspect/init, decoded
// into the command's own wire type of an election's state (cmdutil.StateJSON).
type tryAcquireOut struct {
	Acquired bool               `json:"acquired"`
	Grant    *cmdutil.StateJSON `json:"grant"`
	Current  cmdutil.StateJSON  `json:"current"`
}

type inspectOut struct {
	cmdutil.StateJSON
	State string `json:"state"`
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("decode %q: %v", r.stdout, err)
	}
	return v
}

// storeEnv is the environment selecting one store for an election.
type storeEnv struct {
	name string
	env  []string
	// anchor checks, on the Swarm store, the anchor service (nil elsewhere).
	anchorExists func(t *testing.T, ns string) bool
	// clockFences: every new term's fence takes the clock into account (lease.ClockFencer), so
	// it is above the last fence, not necessarily the next number.
	clockFences bool
}

func fileStore(t *testing.T) storeEnv {
	return storeEnv{name: "file", env: []string{"SWARM_LEASE_STORE=file://" + t.TempDir()}}
}

func swarmStore(t *testing.T) storeEnv {
	host := leasetest.SwarmHost(t)
	return storeEnv{
		name: "swarm",
		env:  []string{"SWARM_LEASE_STORE=swarm", "DOCKER_HOST=" + host},
		anchorExists: func(t *testing.T, ns string) bool {
			out, err := exec.Command("docker", "-H", host, "service", "inspect", "--format",
				"{{.Spec.Mode.Replicated.Replicas}}", ns+"-lease").CombinedOutput()
			if err != nil {
				return false
			}
			if got := strings.TrimSpace(string(out)); got != "0" {
				t.Fatalf("anchor replicas = %q, want 0", got)
			}
			return true
		},
	}
}

// TestLifecycle is the acceptance scenario, on each store, with every contender a
// separate process.
func TestLifecycle(t *testing.T) {
	for _, mk := range []func(*testing.T) storeEnv{fileStore, swarmStore} {
		st := mk(t)
		t.Run(st.name, func(t *testing.T) { testLifecycle(t, st) })
	}
}

func testLifecycle(t *testing.T, st storeEnv) {
	ns := leasetest.Namespace(t)
	base := append([]string{"SWARM_LEASE_NAMESPACE=" + ns}, st.env...)
	a := append([]string{"SWARM_LEASE_HOLDER_ID=a"}, base...)
	b := append([]string{"SWARM_LEASE_HOLDER_ID=b"}, base...)
	t.Cleanup(func() { cli(t, a, "destroy") })

	expectCode(t, cli(t, a, "init"), 0, "init")
	first := decode[inspectOut](t, cli(t, a, "init", "--json"))
	if !first.Exists || first.Acquired {
		t.Fatalf("init: %+v", first)
	}
	expectCode(t, cli(t, a, "init"), 0, "init again (idempotent)")
	if again := decode[inspectOut](t, cli(t, a, "inspect", "--json")); again.Fence != first.Fence {
		t.Fatalf("a second init changed the fence: %d → %d", first.Fence, again.Fence)
	}
	if st.anchorExists != nil && !st.anchorExists(t, ns) {
		t.Fatal("no anchor service after init")
	}

	r := cli(t, a, "try-acquire", "--json")
	expectCode(t, r, 0, "A try-acquire")
	won := decode[tryAcquireOut](t, r)
	if !won.Acquired || won.Grant == nil || won.Grant.HolderID != "a" {
		t.Fatalf("A try-acquire: %+v", won)
	}
	f := won.Grant.Fence

	r = cli(t, b, "try-acquire", "--json")
	expectCode(t, r, 75, "B try-acquire while A holds")
	if lost := decode[tryAcquireOut](t, r); lost.Acquired || lost.Current.HolderID != "a" || lost.Current.Fence != f {
		t.Fatalf("B try-acquire: %+v", lost)
	}

	r = cli(t, a, "renew", strconv.FormatUint(f, 10))
	expectCode(t, r, 0, "A renew f")
	if got := strings.TrimSpace(r.stdout); got != strconv.FormatUint(f, 10) {
		t.Fatalf("A renew printed fence %q, want %d", got, f)
	}
	expectCode(t, cli(t, b, "release", strconv.FormatUint(f, 10)), 3, "B release f")
	expectCode(t, cli(t, b, "renew", strconv.FormatUint(f, 10)), 3, "B renew f")
	expectCode(t, cli(t, a, "release", strconv.FormatUint(f, 10)), 0, "A release f")

	r = cli(t, b, "try-acquire", "--json")
	expectCode(t, r, 0, "B try-acquire after A's release")
	g := decode[tryAcquireOut](t, r)
	if g.Grant == nil || g.Grant.Fence != f+1 && !(st.clockFences && g.Grant.Fence > f) {
		t.Fatalf("B's grant after release: %+v, want fence %d", g, f+1)
	}
	f = g.Grant.Fence

	expectCode(t, cli(t, a, "destroy"), 0, "destroy")
	if st.anchorExists != nil && st.anchorExists(t, ns) {
		t.Fatal("the anchor service still exists after destroy")
	}
	if gone := decode[inspectOut](t, cli(t, a, "inspect", "--json")); gone.Exists {
		t.Fatalf("inspect after destroy: %+v", gone)
	}
	expectCode(t, cli(t, a, "destroy"), 0, "destroy again (idempotent)")
	r = cli(t, a, "try-acquire", "--json")
	expectCode(t, r, 0, "try-acquire after destroy")
	if g := decode[tryAcquireOut](t, r); g.Grant.Fence <= f {
		t.Fatalf("fence after destroy and re-creation = %d, not above %d", g.Grant.Fence, f)
	}
}

// TestTakeoverOnlyAfterRenewalsStop: with a 2 s TTL, B cannot take over while A renews, and
// takes over once A stops — not before A's lease has expired.
func TestTakeoverOnlyAfterRenewalsStop(t *testing.T) {
	leasetest.Long(t, "watches a holder's renewals for two TTLs")
	for _, mk := range []func(*testing.T) storeEnv{fileStore, swarmStore} {
		st := mk(t)
		t.Run(st.name, func(t *testing.T) {
			ns := leasetest.Namespace(t)
			base := append([]string{"SWARM_LEASE_NAMESPACE=" + ns, "SWARM_LEASE_TTL_MS=2000", "SWARM_LEASE_MAX_CLOCK_SKEW_MS=200"}, st.env...)
			a := append([]string{"SWARM_LEASE_HOLDER_ID=a"}, base...)
			b := append([]string{"SWARM_LEASE_HOLDER_ID=b"}, base...)
			t.Cleanup(func() { cli(t, a, "destroy") })

			won := decode[tryAcquireOut](t, cli(t, a, "try-acquire", "--json"))
			if !won.Acquired {
				t.Fatalf("A try-acquire: %+v", won)
			}
			fence := strconv.FormatUint(won.Grant.Fence, 10)
			// A renews every 500 ms for 4 s (two TTLs): B is refused throughout.
			var lastExpiry time.Time
			for end := time.Now().Add(4 * time.Second); time.Now().Before(end); {
				r := cli(t, a, "renew", fence, "--json")
				expectCode(t, r, 0, "A renew")
				lastExpiry = decode[struct {
					ExpiresAt time.Time `json:"expires_at"`
				}](t, r).ExpiresAt
				expectCode(t, cli(t, b, "try-acquire"), 75, "B try-acquire while A renews")
				time.Sleep(500 * time.Millisecond) // the renewal cadence under test, not synchronisation
			}
			// A stops renewing; B polls until it wins.
			deadline := time.Now().Add(10 * time.Second)
			for {
				r := cli(t, b, "try-acquire", "--json")
				if r.code == 0 {
					took := time.Now()
					if g := decode[tryAcquireOut](t, r); g.Grant.Fence != won.Grant.Fence+1 {
						t.Fatalf("B's fence %d, want %d", g.Grant.Fence, won.Grant.Fence+1)
					}
					// One host, one wall clock: B may win only past expiry + the 200 ms skew.
					if took.Before(lastExpiry.Add(200 * time.Millisecond)) {
						t.Fatalf("B took over at %s, before A's lease expired at %s (+200 ms skew)", took, lastExpiry)
					}
					t.Logf("B took over %v after A's lease expired", took.Sub(lastExpiry))
					break
				}
				expectCode(t, r, 75, "B try-acquire after A stopped")
				if time.Now().After(deadline) {
					t.Fatal("B never took over after A stopped renewing")
				}
				time.Sleep(100 * time.Millisecond) // poll interval
			}
			expectCode(t, cli(t, a, "renew", fence), 3, "A renew after B took over")
		})
	}
}

func TestConfigurationErrorsNameTheSetting(t *testing.T) {
	store := "SWARM_LEASE_STORE=file://" + t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"env", []string{store, "SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a", "SWARM_LEASE_TTL_MS=soon"}, nil,
			[]string{"ttl_ms", `"soon"`, "environment variable SWARM_LEASE_TTL_MS"}},
		{"flag", []string{store, "SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a"}, []string{"--max-cas-retries", "-1"},
			[]string{"max_cas_retries", "flag --max-cas-retries"}},
		{"store", []string{"SWARM_LEASE_STORE=postgres://x", "SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a"}, nil,
			[]string{"store", "environment variable SWARM_LEASE_STORE", "file://"}},
		{"prefix", []string{store, "APP_NAMESPACE=x", "APP_HOLDER_ID=a", "APP_MAX_CLOCK_SKEW_MS=40000"}, []string{"--env-prefix", "APP"},
			[]string{"max_clock_skew_ms", "APP_MAX_CLOCK_SKEW_MS", "below the TTL"}},
		{"no discovery", []string{store, "DOCKER_HOST=unix:///nonexistent.sock"}, nil,
			[]string{"SWARM_LEASE_NAMESPACE", "--namespace"}},
		{"no discovery: contender", []string{store, "DOCKER_HOST=unix:///nonexistent.sock"}, []string{"try-acquire"},
			[]string{"SWARM_LEASE_NAMESPACE", "--namespace"}},
		{"fence", []string{store, "SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a"}, []string{"renew", "seven"},
			[]string{"invalid fence", `"seven"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if len(args) == 0 || strings.HasPrefix(args[0], "-") {
				args = append([]string{"inspect"}, args...)
			}
			r := cli(t, tc.env, args...)
			expectCode(t, r, 2, "invalid configuration")
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("error %q does not mention %q", r.stderr, w)
				}
			}
		})
	}
}

func TestDockerUnreachable(t *testing.T) {
	r := cli(t, []string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a", "DOCKER_HOST=unix:///nonexistent/docker.sock"}, "try-acquire")
	expectCode(t, r, 5, "try-acquire without a Docker engine")
	if !strings.HasPrefix(r.stderr, "lfp-swarm-lease: cannot reach swarm store at unix:///nonexistent/docker.sock (no such file or directory): ") ||
		!strings.Contains(r.stderr, "DOCKER_HOST") {
		t.Fatalf("message %q does not say first that the store cannot be reached, where, and what to do", r.stderr)
	}
}

func TestFileVariantOfSetting(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "holder")
	if err := os.WriteFile(secret, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"SWARM_LEASE_STORE=file://" + dir, "SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID_FILE=" + secret}
	r := cli(t, env, "try-acquire", "--json")
	expectCode(t, r, 0, "try-acquire")
	if g := decode[tryAcquireOut](t, r); g.Grant.HolderID != "from-file" {
		t.Fatalf("holder = %q, want the file's content", g.Grant.HolderID)
	}
	r = cli(t, append(env, "SWARM_LEASE_HOLDER_ID=direct"), "inspect")
	expectCode(t, r, 2, "both X and X_FILE")
}

func TestNotASwarmManager(t *testing.T) {
	host := leasetest.PlainDockerHost(t)
	r := cli(t, []string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a", "DOCKER_HOST=" + host}, "try-acquire")
	expectCode(t, r, 6, "try-acquire on an engine in no Swarm")
	if !strings.Contains(r.stderr, "not a swarm manager") {
		t.Fatalf("message %q does not say the engine is not a Swarm manager", r.stderr)
	}
}

// TestFileStoreURLIsTheSameStoreFromAnyDirectory: file://localhost/ABS names /ABS whatever the
// working directory, so two contenders started in different directories share one election;
// a file URL naming another host is refused.
func TestFileStoreURLIsTheSameStoreFromAnyDirectory(t *testing.T) {
	storeDir := filepath.Join(t.TempDir(), "store")
	env := []string{"SWARM_LEASE_STORE=file://localhost" + storeDir, "SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t)}
	first := cliIn(t, t.TempDir(), append([]string{"SWARM_LEASE_HOLDER_ID=a"}, env...), "try-acquire")
	expectCode(t, first, 0, "try-acquire by a in one directory")
	expectCode(t, cliIn(t, t.TempDir(), append([]string{"SWARM_LEASE_HOLDER_ID=b"}, env...), "try-acquire"), 75, "try-acquire by b in another directory, same URL")
	if !strings.Contains(first.stderr, "file store "+storeDir+" ") {
		t.Fatalf("the output does not name the resolved directory %s:\n%s", storeDir, first.stderr)
	}

	other := cli(t, []string{"SWARM_LEASE_STORE=file://otherhost" + storeDir, "SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a"}, "try-acquire")
	expectCode(t, other, 2, "a file URL naming another host")
	if !strings.Contains(other.stderr, `host "otherhost"`) || !strings.Contains(other.stderr, "SWARM_LEASE_STORE") {
		t.Fatalf("the error does not name the host and the setting:\n%s", other.stderr)
	}
}

// TestUnknownVariableWarns: a misspelt variable under the prefix is named on stderr with the
// closest setting; what run exports to its child and the test variables are not.
func TestUnknownVariableWarns(t *testing.T) {
	env := []string{"SWARM_LEASE_STORE=file://" + t.TempDir(), "SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a",
		"SWARM_LEASE_FENCE=7", "SWARM_LEASE_TEST_DOCKER_HOST=unix:///nonexistent"}
	r := cli(t, append(env, "SWARM_LEASE_TTL_M=5000"), "inspect")
	expectCode(t, r, 0, "inspect with a misspelt variable")
	if n := strings.Count(r.stderr, "warning:"); n != 1 || !strings.Contains(r.stderr, "SWARM_LEASE_TTL_M is not a setting and is ignored; the closest is SWARM_LEASE_TTL_MS") {
		t.Fatalf("want one warning naming SWARM_LEASE_TTL_M and SWARM_LEASE_TTL_MS:\n%s", r.stderr)
	}
	r = cli(t, []string{"APP_STORE=memory", "APP_NAMESPACE=x", "APP_HOLDER_ID=a", "APP_NAMESPCE=y", "APP_FENCE=3"}, "--env-prefix", "APP", "inspect")
	if !strings.Contains(r.stderr, "APP_NAMESPCE is not a setting and is ignored; the closest is APP_NAMESPACE") || strings.Count(r.stderr, "warning:") != 1 {
		t.Fatalf("want one warning naming APP_NAMESPCE and APP_NAMESPACE:\n%s", r.stderr)
	}
	if r := cli(t, env, "inspect"); strings.Contains(r.stderr, "warning") {
		t.Fatalf("a warning for the child's or the tests' variables:\n%s", r.stderr)
	}
}
