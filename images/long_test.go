package images

import (
	"os"
	"testing"
)

// long marks t as a test that takes long (it builds the product's binaries for every
// platform), which the fast lane (`go test -short`, scripts/test.sh --fast) skips and the whole
// suite runs; under CI=true, -short fails it instead, since CI runs every test. (The lease
// module's leasetest.Long is the same rule; this module depends on none of the others.)
func long(t *testing.T, why string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("-short and CI=true: this test %s, and CI runs every test (scripts/test.sh never passes -short)", why)
	}
	t.Skipf("-short: this test %s (the whole suite, scripts/test.sh, runs it)", why)
}
