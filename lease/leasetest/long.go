package leasetest

import (
	"os"
	"testing"
)

// Long marks t as a test that takes long — builds of whole programs, real processes, etcd
// clusters, Docker engines, a browser — which the fast lane (`go test -short`, scripts/test.sh
// --fast) skips and the whole suite runs. Under CI=true, -short fails the test instead of
// skipping it: CI runs the whole suite, which never passes -short, and a CI run that left
// these tests out must not pass.
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
