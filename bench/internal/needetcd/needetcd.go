// Package needetcd finds the etcd server binary for tests, which skip without it on a developer
// machine and fail without it in CI (CI=true), where .ci/run installs Debian's etcd-server.
package needetcd

import (
	"os"
	"os/exec"
	"testing"
)

// Binary returns the path of `etcd` on PATH. Without one, the test is skipped, or failed when
// CI=true: a comparison that CI never runs would go unnoticed when it breaks.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err == nil {
		return bin
	}
	const msg = "etcd is not installed (apt-get install etcd-server)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI installs it in .ci/run")
	}
	t.Skip(msg)
	return ""
}
