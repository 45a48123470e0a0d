// Package contend starts the contenders of a fault run: `lfp-swarm-lease run` supervisors whose
// fault child logs its term (Supervisor), and one-shot lease callers recording a history for the
// linearizability check (Caller), each attached to one manager of the cluster.
package contend

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// Binaries are the programs a fault run starts, built once per process.
type Binaries struct {
	// Lease is lfp-swarm-lease, built from the workspace's cli module.
	Lease string
	// Child is faultchild, the supervisors' leader-only command.
	Child string
}

var built struct {
	once sync.Once
	bins Binaries
	err  error
}

// Build builds lfp-swarm-lease and faultchild into a temporary directory, once per process, and
// returns their paths; the directory is removed by Cleanup. Both are static (no cgo), so that
// they run in a container of no base image as well as on the host.
func Build() (Binaries, error) {
	built.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		module := filepath.Dir(filepath.Dir(file)) // faults/
		dir, err := os.MkdirTemp("", "lfp-faults-bin-")
		if err != nil {
			built.err = err
			return
		}
		bins := Binaries{Lease: filepath.Join(dir, "lfp-swarm-lease"), Child: filepath.Join(dir, "faultchild")}
		for out, pkg := range map[string]string{
			bins.Lease: filepath.Join(module, "..", "cli", "cmd", "lfp-swarm-lease"),
			bins.Child: filepath.Join(module, "internal", "faultchild"),
		} {
			cmd := exec.Command("go", "build", "-o", out, ".")
			cmd.Dir = pkg
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				built.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
				return
			}
		}
		built.bins = bins
	})
	return built.bins, built.err
}

// Cleanup removes the binaries Build made.
func Cleanup() {
	if built.bins.Lease != "" {
		_ = os.RemoveAll(filepath.Dir(built.bins.Lease))
	}
}
