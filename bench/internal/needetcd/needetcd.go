// Package needetcd finds the etcd server binary for tests, which skip without it on a developer
// machine and fail without it in CI (CI=true), where .ci/run installs Debian's etcd-server; and
// it gates the module's long tests (Long), which the fast lane skips.
package needetcd

import (
	"os"
	"os/exec"
	"testing"
)

// Binary returns the path of `etcd` on PATH. Without one, the test is skipped, or failed when
// CI=true: a comparison that CI never runs would go unnoticed when it breaks. Under -short (the
// fast lane) it is skipped too, as a Long test.
func Binary(t testing.TB) string {
	t.Helper()
	Long(t, "runs etcd server processes")
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

// Long marks t as a test that takes long (real processes, builds), which the fast lane (`go
// test -short`, scripts/test.sh --fast) skips and the whole suite runs. Under CI=true, -short
// fails the test instead: CI runs every test, and scripts/test.sh never passes -short. (The
// lease module's leasetest.Long is the same rule; this module stands alone.)
func Long(t testing.TB, why string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("-short and CI=true: this test %s, and CI runs every test (scripts/test.sh never passes -short)", why)
	}
	t.Skipf("-short: this test %s (the whole suite, scripts/test.sh, runs it)", why)
}
