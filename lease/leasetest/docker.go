package leasetest

import (
	"os/exec"
	"testing"
)

// Docker runs the docker CLI against host and returns its trimmed output, failing the test on
// error.
func Docker(t testing.TB, host string, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", append([]string{"-H", host}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
	return string(trimNewline(out))
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
