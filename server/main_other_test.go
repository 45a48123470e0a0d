//go:build !linux

package server_test

import (
	"os"
	"testing"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// TestMain of the platforms without connlimit_linux_test.go's child processes.
func TestMain(m *testing.M) {
	wire.InstallErrorModel() // as the commands that serve the API do
	os.Exit(m.Run())
}
