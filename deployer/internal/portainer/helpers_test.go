package portainer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
)

// Credentials the tests' fakes accept.
const (
	testKey      = "ptr_client-test-key"
	testUser     = "deployer"
	testPassword = "client-test-password"
)

// fakeOptions are a fake's options accepting the test credentials, on engine host ("" none).
func fakeOptions(host string) portainertest.Options {
	return portainertest.Options{DockerHost: host, APIKeys: []string{testKey}, Users: map[string]string{testUser: testPassword}}
}

// keyClient is a client of fake with the API key.
func keyClient(t *testing.T, fake *portainertest.Server) *portainer.Client {
	t.Helper()
	return newClient(t, portainer.Options{URL: fake.URL(), APIKey: testKey})
}

// passwordClient is a client of fake that logs in.
func passwordClient(t *testing.T, fake *portainertest.Server) *portainer.Client {
	t.Helper()
	return newClient(t, portainer.Options{URL: fake.URL(), Username: testUser, Password: testPassword})
}

func newClient(t *testing.T, o portainer.Options) *portainer.Client {
	t.Helper()
	c, err := portainer.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testContext is a context that ends with the test, bounded in time.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// errorsAs is errors.As, for brevity in conditions.
func errorsAs(err error, target any) bool { return errors.As(err, target) }

// optionsFor are API-key options for a test server at url.
func optionsFor(url string) portainer.Options { return portainer.Options{URL: url, APIKey: testKey} }
