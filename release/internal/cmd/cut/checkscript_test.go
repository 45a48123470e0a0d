package cut

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

// pipelineBudget is the least time the release pipeline's tests must be given: on a busy
// machine goreleaser's build of every platform alone took over 9 minutes, past go test's
// default timeout of 10.
const pipelineBudget = 30 * time.Minute

// The release tests (DefaultTestCommand) give every go test an explicit timeout, and the release
// pipeline's tests one of their own, long enough, in a run of their package alone with -v, so
// that go test streams each test's progress while they run.
func TestReleaseTestsHaveTheirTimeAndShowProgress(t *testing.T) {
	path := filepath.Join(testrepo.SourceRoot(), DefaultTestCommand[0])
	script, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pipeline bool
	for _, line := range strings.Split(string(script), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if !strings.Contains(line, "go test") {
			continue
		}
		args := strings.Fields(line[strings.Index(line, "go test"):])
		var timeout time.Duration
		verbose := false
		for i, a := range args {
			switch {
			case a == "-v":
				verbose = true
			case strings.HasPrefix(a, "-timeout="):
				timeout, err = time.ParseDuration(strings.TrimPrefix(a, "-timeout="))
			case a == "-timeout" && i+1 < len(args):
				timeout, err = time.ParseDuration(args[i+1])
			}
		}
		if err != nil || timeout == 0 {
			t.Errorf("%s: %q runs with go test's default timeout (%v)", path, strings.TrimSpace(line), err)
		}
		if strings.Contains(line, "./...") {
			t.Errorf("%s: %q runs every package, the release pipeline's among them, under one timeout and without streaming", path, strings.TrimSpace(line))
		}
		if strings.HasSuffix(strings.TrimSpace(line), "./internal/pipeline") {
			pipeline = true
			if timeout < pipelineBudget || !verbose {
				t.Errorf("%s: the pipeline's tests run with -timeout %v (want at least %v) and -v %v (want it)", path, timeout, pipelineBudget, verbose)
			}
		}
	}
	if !pipeline {
		t.Errorf("%s runs no go test of ./internal/pipeline alone", path)
	}
}
