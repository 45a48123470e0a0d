package cmdutil

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
)

// TestConnectionLimitsFitTheServer: a per-client connection limit above the global one is the
// server's rule (server.CheckConnectionLimits), refused as a usage error naming the setting and
// its source before a server is built.
func TestConnectionLimitsFitTheServer(t *testing.T) {
	load := func(vars ...string) *config.Config {
		t.Helper()
		environ := append([]string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=h", "SWARM_LEASE_STORE=memory"}, vars...)
		c, err := config.Loader{Environ: func() []string { return environ }}.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	err := CheckConnectionLimit(load("SWARM_LEASE_MAX_CONNECTIONS=100", "SWARM_LEASE_MAX_CONNECTIONS_PER_CLIENT=200"))
	var usage *UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), `invalid max_connections_per_client "200" (from environment variable SWARM_LEASE_MAX_CONNECTIONS_PER_CLIENT): must not exceed max_connections (100)`) {
		t.Fatalf("per-client above global: %v", err)
	}
	if err := CheckConnectionLimit(load("SWARM_LEASE_MAX_CONNECTIONS=100", "SWARM_LEASE_MAX_CONNECTIONS_PER_CLIENT=100")); err != nil {
		t.Fatalf("per-client equal to global: %v", err)
	}
}
