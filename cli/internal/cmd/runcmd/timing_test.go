package runcmd

import (
	"fmt"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"

	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// runInProcess runs `run args` in this process with env as the whole environment, and returns
// the exit code the root would give and stderr.
func runInProcess(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	var out, errBuf bytes.Buffer
	f := &cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: &out, Err: &errBuf},
		Environ: func() []string { return env }, Hostname: func() string { return "test-host" }}
	cmd := NewCmdRun(f, nil)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	if err != nil {
		fmt.Fprintln(&errBuf, err)
	}
	code, _ := cmdutil.Classify(err)
	return code, errBuf.String()
}

// self is this test binary: an executable that run's check of the command accepts (no test
// here gets as far as starting it).
func self(t *testing.T) string {
	t.Helper()
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunTimingIsAConfigurationErrorInBothModes: a renew interval plus grace period that does
// not fit in the TTL is refused by the engines' constructors before run contends, listens or
// sends a request, and run exits 2 with the setting names, values and sources — on the Swarm
// lease's stores as through an elections server.
func TestRunTimingIsAConfigurationErrorInBothModes(t *testing.T) {
	store := "file://" + t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"lease", []string{"SWARM_LEASE_TTL_MS=3000"}, []string{"--store", store, "--namespace", "jobs", "--holder-id", "a", "--shutdown-timeout-ms", "2000", "--listen", "127.0.0.1:1"},
			[]string{"renew_interval_ms = 1000, from default: a third of ttl_ms", "shutdown_timeout_ms = 2000, from flag --shutdown-timeout-ms",
				"ttl_ms = 3000, from environment variable SWARM_LEASE_TTL_MS", "2700 ms"}},
		{"lease: renew", nil, []string{"--store", store, "--namespace", "jobs", "--holder-id", "a", "--ttl-ms", "1000", "--renew-interval-ms", "900", "--shutdown-timeout-ms", "0", "--max-clock-skew-ms", "100"},
			[]string{"renew_interval_ms = 900, from flag --renew-interval-ms", "shutdown_timeout_ms = 0", "900 ms"}},
		{"elections server", []string{"SWARM_LEASE_SERVER=http://127.0.0.1:1", "SWARM_LEASE_ELECTION=nightly-report", "SWARM_LEASE_TTL_MS=5000"}, nil,
			[]string{"renew_interval_ms = 1666", "shutdown_timeout_ms = 10000, from default", "ttl_ms = 5000, from environment variable SWARM_LEASE_TTL_MS", "4500 ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runInProcess(t, tc.env, append(tc.args, "--", self(t))...)
			if code != cmdutil.ExitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, cmdutil.ExitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, goName := range []string{"RenewInterval", "StopBefore", "renew interval (1s)", "contending"} {
				if strings.Contains(stderr, goName) {
					t.Errorf("stderr shows %q, not a setting:\n%s", goName, stderr)
				}
			}
		})
	}
}
