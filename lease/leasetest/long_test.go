package leasetest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLongHelper is the child of TestLong: it calls Long in the mode its parent chose.
func TestLongHelper(t *testing.T) {
	if os.Getenv("LEASETEST_LONG_CHILD") != "1" {
		t.Skip("run by TestLong")
	}
	Long(t, "is the long test of TestLong")
	t.Log("ran the long test")
}

// Long runs the test in the whole suite, skips it under -short, and fails it under -short with
// CI=true, so that a CI run with -short cannot pass without the long tests.
func TestLong(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		ci    string
		fails bool
		want  string
	}{
		{"whole suite", nil, "", false, "ran the long test"},
		{"whole suite in CI", nil, "true", false, "ran the long test"},
		{"fast lane", []string{"-test.short"}, "", false, "--- SKIP"},
		{"fast lane in CI", []string{"-test.short"}, "true", true, "-short and CI=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestLongHelper$", "-test.v"}, tc.args...)...)
			cmd.Env = append(os.Environ(), "LEASETEST_LONG_CHILD=1", "CI="+tc.ci)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.fails || !strings.Contains(string(out), tc.want) {
				t.Fatalf("err %v (want failure: %v), output lacks %q:\n%s", err, tc.fails, tc.want, out)
			}
		})
	}
}
