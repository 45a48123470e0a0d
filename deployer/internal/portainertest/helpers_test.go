package portainertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// testKey is the API key the tests' fakes accept.
const testKey = "ptr_testkey"

// exchange is one raw request to a fake and its answer.
type exchange struct {
	status      int
	contentType string
	body        string
	header      http.Header
}

// send makes one request with the given headers (name → value) and body (nil: none).
func send(t *testing.T, method, url string, headers map[string]string, body any) exchange {
	t.Helper()
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, reader)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return exchange{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: string(data), header: resp.Header}
}

// keyed is the header set of an API-key request.
func keyed() map[string]string { return map[string]string{"X-API-Key": testKey} }

// swarmID is the test Swarm's cluster ID.
func swarmID(t *testing.T, host string) string {
	t.Helper()
	return leasetest.Docker(t, host, "info", "--format", "{{.Swarm.Cluster.ID}}")
}

// uniqueName is a stack name no other test (or engineer) uses.
func itoa(n int) string { return strconv.Itoa(n) }

func uniqueName(prefix string) string { return prefix + "-" + randomHex(4) }

// serviceNames lists the engine's services of the stack namespace name.
func serviceNames(t *testing.T, host, name string) []string {
	t.Helper()
	out := leasetest.Docker(t, host, "service", "ls", "--filter", "label=com.docker.stack.namespace="+name, "--format", "{{.Name}}")
	return strings.Fields(out)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, timeout)
		}
		time.Sleep(200 * time.Millisecond) // polling the engine; no event to wait on
	}
}

// removeService removes a service the test created, at cleanup.
func removeService(t *testing.T, host, name string) {
	t.Cleanup(func() { _ = exec.Command("docker", "-H", host, "service", "rm", name).Run() })
}
