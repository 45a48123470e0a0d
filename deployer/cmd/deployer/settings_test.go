//go:build linux

package main

import (
	"strings"
	"testing"
)

// A flag the command does not have is a usage error: exit 2, as every setting to fix.
func TestUnknownFlagExits2(t *testing.T) {
	r := deployer(t, nil, "remove", "--portainer-ulr", "https://portainer.example")
	if r.Code != 2 || !strings.Contains(r.Stderr, "unknown flag: --portainer-ulr") {
		t.Errorf("exit %d, want 2 naming the flag\nstderr: %s", r.Code, r.Brief())
	}
}
