package e2e

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The first contact of a newcomer: every command, through every way in, answers each kind of
// failure with its documented exit code and one line that names the cause first and then the
// fix; and the five ways that contact went wrong before — the cause last, one failure in two
// voices, exit codes lost on the way, silence while failing, help that did not fit — stay
// fixed. (The deployer's way in, `bun run demo`, is tested with the deployer.)

// documentedCodes are the exit codes of docs/configuration.md's table, by their --json code.
func documentedCodes(t *testing.T) map[string]int {
	t.Helper()
	content, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	row := regexp.MustCompile(`^\| (\d+) \| ([^|]*) \|`)
	for _, line := range strings.Split(string(content), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			code, _ := strconv.Atoi(m[1])
			for _, name := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[2], -1) {
				codes[name[1]] = code
			}
		}
	}
	if len(codes) < 10 {
		t.Fatalf("docs/configuration.md's exit codes: found %v", codes)
	}
	return codes
}

// goRun runs `go run ./cli/cmd/lfp-swarm-lease ARGS…` from the repository's root, as the README
// does, with env and what the go command needs of the test's environment.
func goRun(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "./cli/cmd/lfp-swarm-lease"}, args...)...)
	cmd.Dir = "../.."
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container"}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "GO") || name == "HOME" || name == "XDG_CACHE_HOME" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return runCommand(t, cmd)
}

// failure is one way a command fails: its arguments and environment, the --json code whose
// exit code docs/configuration.md gives, and the start of the one line that says so (the cause)
// and a part of it that says what to do (the fix).
type failure struct {
	name       string
	args, env  []string
	code       string
	cause, fix string
}

// firstContactFailures are, for every command, a settings error, a usage error, a store or
// server that does not answer, and a taken port — each where the command has one. (A store
// that does not answer makes run and serve neither exit nor stay silent: TestSilenceWhileFailing.)
func firstContactFailures(t *testing.T) []failure {
	store := "file://" + t.TempDir()
	downStore := []string{"DOCKER_HOST=unix:///nonexistent/docker.sock"}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	taken := busy.Addr().String()
	down := "http://" + watchFreeAddr(t)

	var out []failure
	for _, c := range []struct {
		name string
		args []string
	}{{"init", nil}, {"try-acquire", []string{"--holder-id", "a"}}, {"renew", []string{"1", "--holder-id", "a"}},
		{"release", []string{"1", "--holder-id", "a"}}, {"inspect", nil}, {"destroy", nil}} {
		cmd := append([]string{c.name}, c.args...)
		out = append(out,
			failure{c.name + " settings", append(cmd, "--store", store, "--namespace", "x", "--ttl-ms", "100"), nil,
				"invalid_configuration", `invalid ttl_ms "100" (from flag --ttl-ms)`, "want a whole number of milliseconds from 500"},
			failure{c.name + " usage", append(cmd, "--ttl", "100"), nil, "usage", "unknown flag --ttl: did you mean --ttl-ms?", "--help lists the flags"},
			failure{c.name + " store down", append(cmd, "--store", "swarm", "--namespace", "x"), downStore,
				"store_unreachable", "cannot reach swarm store at unix:///nonexistent/docker.sock (no such file or directory)", "DOCKER_HOST"},
		)
	}
	runArgs := []string{"run", "--store", store, "--namespace", "x", "--holder-id", "a"}
	out = append(out,
		failure{"run settings", append(runArgs, "--ttl-ms", "100", "--", "true"), nil,
			"invalid_configuration", `invalid ttl_ms "100" (from flag --ttl-ms)`, "want a whole number of milliseconds from 500"},
		failure{"run usage", append(runArgs, "--ttl", "100", "--", "true"), nil, "usage", "unknown flag --ttl: did you mean --ttl-ms?", "--help"},
		failure{"run taken port", append(runArgs, "--listen", taken, "--", "true"), nil,
			"invalid_configuration", "listen " + taken + " (from flag --listen) is in use by another process", "--listen 127.0.0.1:0 takes any free one"},
		failure{"serve settings", []string{"serve", "--store", store, "--room-shards", "1000"}, nil,
			"invalid_configuration", `invalid room_shards "1000" (from flag --room-shards)`, "want a whole number from 1 to 256"},
		failure{"serve usage", []string{"serve", "--lisen", "127.0.0.1:0"}, nil, "usage", "unknown flag --lisen: did you mean --listen?", "--help"},
		failure{"serve taken port", []string{"serve", "--store", store, "--listen", taken}, nil,
			"invalid_configuration", "listen " + taken + " (from flag --listen) is in use by another process", "--listen 127.0.0.1:0 takes any free one"},
		failure{"watch settings", []string{"watch", "ftp://controllers"}, nil, "invalid_configuration", `invalid URL: "ftp://controllers" is not an http://`, "want http://HOST:PORT"},
		failure{"watch usage", []string{"watch", "--jsn", down}, nil, "usage", "unknown flag --jsn: did you mean --json?", "--help"},
		failure{"watch server down", []string{"watch", "--initial-timeout", "1s", down}, nil,
			"server_unreachable", "cannot reach the controller at " + down + " (connection refused)", "start it"},
		failure{"version usage", []string{"version", "--jsn"}, nil, "usage", "unknown flag --jsn: did you mean --json?", "--help"},
		failure{"openapi usage", []string{"openapi", "--jsn"}, nil, "usage", "unknown flag: --jsn", "--help"},
		failure{"unknown command", []string{"tryacquire"}, nil, "usage", `unknown command "tryacquire" for "lfp-swarm-lease": did you mean try-acquire?`, "--help"},
	)
	for _, sub := range [][]string{{"create"}, {"status", "nightly-report"}, {"watch", "nightly-report"}} {
		name := "elections " + sub[0]
		out = append(out,
			failure{name + " settings", append(append([]string{"elections"}, sub...), "--server", "ftp://elect"), nil,
				"invalid_configuration", `invalid server (from flag --server): "ftp://elect" is not an http://`, "want http://HOST:PORT"},
			failure{name + " usage", append(append([]string{"elections"}, sub...), "--jsn"), nil, "usage", "unknown flag --jsn: did you mean --json?", "--help"},
		)
		if sub[0] != "watch" { // elections watch waits the initial minute: watch shows the same
			out = append(out, failure{name + " server down", append(append([]string{"elections"}, sub...), "--server", down), nil,
				"server_unreachable", "cannot reach the elections server at " + down + " (connection refused)", "start one (lfp-swarm-lease serve)"})
		}
	}
	return out
}

// failureLine is stderr's one line about the failure when it is the last line and every line
// before it is a log line (a watch logs its reconnects while it waits); "" otherwise.
func failureLine(stderr string) string {
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "time=") {
			return ""
		}
	}
	return lines[len(lines)-1]
}

// TestFirstContactTable: through the binary and through `go run` (as the README runs it), every
// failure of every command exits with the code docs/configuration.md documents for it — `go
// run` exits 1 for each, as that page says, and keeps the code in its `exit status N` — and
// says so in one line on stderr, the cause first and then the fix.
func TestFirstContactTable(t *testing.T) {
	leasetest.Long(t, "runs every command's failures through the binary and go run")
	codes := documentedCodes(t)
	for _, f := range firstContactFailures(t) {
		t.Run(f.name, func(t *testing.T) {
			want, ok := codes[f.code]
			if !ok {
				t.Fatalf("docs/configuration.md documents no exit code for %s", f.code)
			}
			r := cli(t, f.env, f.args...)
			if r.code != want {
				t.Errorf("binary: exit %d, want %d (%s)\nstderr: %s", r.code, want, f.code, r.stderr)
			}
			line := "lfp-swarm-lease: " + f.cause
			msg := failureLine(r.stderr)
			if !strings.HasPrefix(msg, line) || !strings.Contains(msg, f.fix) {
				t.Errorf("binary: stderr %q, want one line starting %q and saying %q, after the log's lines only", r.stderr, line, f.fix)
			}
			g := goRun(t, f.env, f.args...)
			rest, status, _ := strings.Cut(strings.TrimSuffix(g.stderr, "\n"), "\nexit status ")
			if g.code != 1 || failureLine(rest+"\n") != msg || status != strconv.Itoa(want) {
				t.Errorf("go run: exit %d, stderr %q; want exit 1, the binary's line and then \"exit status %d\"", g.code, g.stderr, want)
			}
		})
	}
}

// The cause first: a command that lacks its namespace on a store that is not swarm says that,
// and how to set it, before why the Swarm task could not give it.
func TestTheCauseComesFirst(t *testing.T) {
	r := cli(t, []string{"DOCKER_HOST=unix:///nonexistent/docker.sock"}, "try-acquire", "--store", "file:"+t.TempDir(), "--holder-id", "x")
	expectCode(t, r, 2, "try-acquire without a namespace")
	if !strings.HasPrefix(r.stderr, "lfp-swarm-lease: no namespace: set --namespace or SWARM_LEASE_NAMESPACE (") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("stderr %q, want one line that starts with the missing namespace and how to set it", r.stderr)
	}
}

// One failure, one voice: run and serve say the same of a taken port; a server's URL without a
// scheme works for watch, elections and run --server alike; and a server that does not
// answer is exit 5 naming it, for watch and elections alike.
func TestOneFailureOneVoice(t *testing.T) {
	leasetest.Long(t, "starts serve and run processes")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	store := "file://" + t.TempDir()
	sentence := "is in use by another process: set --listen to another port (--listen 127.0.0.1:0 takes any free one)"
	for _, args := range [][]string{
		{"run", "--store", store, "--namespace", "x", "--holder-id", "a", "--listen", busy.Addr().String(), "--", "true"},
		{"serve", "--store", store, "--listen", busy.Addr().String()},
	} {
		if r := cli(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, sentence) {
			t.Errorf("%s with a taken port: exit %d, stderr %q; want 2 and %q", args[0], r.code, r.stderr, sentence)
		}
	}

	srv := startRemoteServer(t, t.TempDir(), "127.0.0.1:0")
	bare := srv.addr // no scheme
	r := cli(t, nil, "elections", "create", "--server", bare)
	expectCode(t, r, 0, "elections create --server HOST:PORT")
	room := strings.TrimSpace(r.stdout)
	expectCode(t, cli(t, nil, "elections", "status", room, "--server", bare), 0, "elections status --server HOST:PORT")
	p := startProc(t, "watch", nil, "watch", bare+"/elections/"+room)
	pollUntil(t, 10*time.Second, "watch HOST:PORT/elections/ID to print the room", func() (bool, string) {
		return strings.Contains(p.out.String(), "room "+room+": vacant"), p.out.String()
	})
	run := startProc(t, "run --server HOST:PORT", nil, "run", "--server", bare, "--election", room, "--holder-id", "a", "--once", "--", "true")
	if code := run.wait(t, 20*time.Second); code != 0 {
		t.Errorf("run --server HOST:PORT --once: exit %d\n%s", code, run.out.String())
	}

	down := "http://" + watchFreeAddr(t)
	for _, args := range [][]string{{"watch", "--initial-timeout", "1s", down}, {"elections", "create", "--server", down}} {
		if r := cli(t, nil, args...); r.code != 5 || !strings.Contains(r.stderr, " at "+down+" (connection refused): ") {
			t.Errorf("%s with the server down: exit %d, stderr %q; want 5 naming it and why", args[0], r.code, r.stderr)
		}
	}
}

// Silence while failing: run --server with its elections server down says so at once and
// again after five seconds, with the count and the last cause, and its /readyz and /metrics
// say it too; once the server is up it campaigns, leads and is ready. serve on a Swarm store
// whose Docker engine is not there says at start why, and keeps saying it.
func TestSilenceWhileFailing(t *testing.T) {
	leasetest.Long(t, "waits for a process's second report of a failure")
	serverAddr, listen := watchFreeAddr(t), watchFreeAddr(t)
	run := startProc(t, "run --server", nil, "run", "--server", serverAddr, "--election", "nightly-report", "--holder-id", "a",
		"--listen", listen, "--", "sleep", "3600")
	reports := regexp.MustCompile(`msg="swarmlease: campaign failed; retrying".* failures=(\d+)`)
	pollUntil(t, 30*time.Second, "two reports of the failing campaign", func() (bool, string) {
		m := reports.FindAllStringSubmatch(run.out.String(), -1)
		return len(m) >= 2 && m[1][1] != "1" && strings.Contains(run.out.String(), "connection refused"), run.out.String()
	})
	status, ready := get(t, "http://"+listen+"/readyz")
	if status != http.StatusServiceUnavailable || !strings.Contains(ready, "requests in a row since") || !strings.Contains(ready, "connection refused") {
		t.Errorf("/readyz: %d %s; want 503 with the count and the last cause", status, ready)
	}
	_, metrics := get(t, "http://"+listen+"/metrics")
	if !strings.Contains(metrics, "\nlfp_swarm_lease_ready 0\n") || !regexp.MustCompile(`lfp_swarm_lease_store_request_errors_total\{kind="[a-z]+",op="campaign",store="server"\} [1-9]`).MatchString(metrics) {
		t.Errorf("/metrics does not say the server fails:\n%s", metrics)
	}
	startRemoteServer(t, t.TempDir(), serverAddr)
	pollUntil(t, 60*time.Second, "run to lead once its server is up", func() (bool, string) {
		return strings.Contains(run.out.String(), "msg=acquired"), run.out.String()
	})
	if status, ready := get(t, "http://"+listen+"/readyz"); status != http.StatusOK {
		t.Errorf("/readyz once leading: %d %s", status, ready)
	}
	if _, metrics := get(t, "http://"+listen+"/metrics"); !strings.Contains(metrics, "\nlfp_swarm_lease_ready 1\n") || !strings.Contains(metrics, "\nlfp_swarm_lease_is_leader 1\n") {
		t.Errorf("/metrics once leading:\n%s", metrics)
	}

	sock := filepath.Join(t.TempDir(), "docker.sock")
	serve := startProc(t, "serve --store swarm", []string{"DOCKER_HOST=unix://" + sock}, "serve", "--store", "swarm", "--listen", "127.0.0.1:0")
	notReady := regexp.MustCompile(`msg="store not ready: requests that need it fail until it is" err=.*` + regexp.QuoteMeta(sock) + `.* failed_checks=(\d+)`)
	pollUntil(t, 20*time.Second, "serve to say twice why its store is not ready", func() (bool, string) {
		m := notReady.FindAllStringSubmatch(serve.out.String(), -1)
		return len(m) >= 2 && m[0][1] == "1" && m[1][1] != "1", serve.out.String()
	})
	addr := listeningPattern.FindStringSubmatch(serve.out.String())[1]
	if _, metrics := get(t, "http://"+addr+"/metrics"); !strings.Contains(metrics, "\nlfp_swarm_lease_ready 0\n") {
		t.Errorf("serve's /metrics does not say the store is not ready:\n%s", metrics)
	}
}

// get fetches url with the HTTP API tests' checks (call): its status and body.
func get(t *testing.T, url string) (status int, body string) {
	t.Helper()
	resp, b := call(t, http.MethodGet, url, nil)
	return resp.StatusCode, string(b)
}

// Help that reads like gh's: the binary prints for every command the help the golden files
// hold — at most 40 lines, each setting's flag with its variable, an example, a page to learn
// more — and run takes --listen off with --server.
func TestHelpReadsLikeGhs(t *testing.T) {
	goldens, err := filepath.Glob("../internal/cmd/testdata/help/*.txt")
	if err != nil || len(goldens) < 15 {
		t.Fatalf("golden help files: %v, %v", goldens, err)
	}
	for _, golden := range goldens {
		path := strings.Split(strings.TrimSuffix(filepath.Base(golden), ".txt"), "_")[1:] // lfp-swarm-lease_elections_create
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		r := cli(t, nil, append(path, "--help")...)
		if r.code != 0 || r.stdout != string(want) {
			t.Errorf("lfp-swarm-lease %s --help: exit %d, output differs from %s:\n%s", strings.Join(path, " "), r.code, golden, r.stdout)
		}
		if n := strings.Count(r.stdout, "\n"); n > 40 || !strings.Contains(r.stdout, "\nEXAMPLES\n") {
			t.Errorf("lfp-swarm-lease %s --help: %d lines", strings.Join(path, " "), n)
		}
	}
	if r := cli(t, nil, "run", "--help"); !strings.Contains(r.stdout, "(SWARM_LEASE_TTL_MS; default 30000)") {
		t.Errorf("run --help does not name ttl_ms's variable and default:\n%s", r.stdout)
	}

	leasetest.Long(t, "runs run --server against a serve process")
	srv := startRemoteServer(t, t.TempDir(), "127.0.0.1:0")
	run := startProc(t, "run --server --listen off", nil, "run", "--server", srv.base, "--election", "nightly-report", "--holder-id", "a",
		"--listen", "off", "--once", "--", "true")
	if code := run.wait(t, 20*time.Second); code != 0 || !strings.Contains(run.out.String(), "msg=acquired") {
		t.Fatalf("run --server --listen off --once: exit %d\n%s", code, run.out.String())
	}
}
