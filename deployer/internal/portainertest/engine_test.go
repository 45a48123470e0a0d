package portainertest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// idleFile is a stack file of one service with no replicas, so nothing is pulled or run: its
// image is on a loopback port where no registry listens. ${VALUE} lands in a label.
const idleFile = "version: \"3.8\"\nservices:\n  idle:\n    image: 127.0.0.1:1/none:1\n    deploy:\n      replicas: 0\n      labels:\n        value: \"${VALUE}\"\n        leak: \"${PORTAINERTEST_LEAK}\"\n"

// create posts a stack of idleFile to endpoint ep through the typed path.
func create(t *testing.T, fake *Server, ep int, name, swarm string, env []EnvVar) exchange {
	t.Helper()
	return send(t, http.MethodPost, fake.URL()+"/api/stacks/create/swarm/string?endpointId="+itoa(ep), keyed(), map[string]any{
		"Name": name, "SwarmID": swarm, "StackFileContent": idleFile, "Env": env,
	})
}

// label reads one of the idle service's deploy labels.
func label(t *testing.T, host, stack, key string) string {
	t.Helper()
	return leasetest.Docker(t, host, "service", "inspect", "--format", `{{index .Spec.Labels "`+key+`"}}`, stack+"_idle")
}

// The deploy's environment is Portainer's own process environment plus the stack's Env, which
// wins: a variable the stack's Env leaves out takes Portainer's value. Names are normalised, and
// a taken name — by a record or by an external stack's services — is a 409 that deploys
// nothing.
func TestCreateUsesPortainersEnvironmentPlusEnvAndRefusesTakenNames(t *testing.T) {
	host := leasetest.SwarmHost(t)
	environ := append(os.Environ(), "PORTAINERTEST_LEAK=from-portainer", "VALUE=overridden")
	fake := Start(t, Options{DockerHost: host, APIKeys: []string{testKey}, Environment: environ})
	swarm := swarmID(t, host)
	name := uniqueName("ptt-env")

	got := create(t, fake, 1, strings.ToUpper(name)+".!", swarm, []EnvVar{{Name: "VALUE", Value: "from-env"}})
	if got.status != http.StatusOK || !strings.Contains(got.body, `"Name":"`+name+`"`) {
		t.Fatalf("create %s: %d %s, want 200 with the normalised name %s", strings.ToUpper(name), got.status, got.body, name)
	}
	if v := label(t, host, name, "value"); v != "from-env" {
		t.Errorf("label value = %q, want from-env: the stack's Env wins", v)
	}
	if v := label(t, host, name, "leak"); v != "from-portainer" {
		t.Errorf("label leak = %q, want Portainer's environment's from-portainer", v)
	}

	if again := create(t, fake, 1, name, swarm, nil); again.status != http.StatusConflict || !strings.Contains(again.body, "A stack with the normalized name '"+name+"' already exists") {
		t.Errorf("second create of %s: %d %s, want 409", name, again.status, again.body)
	}

	external := uniqueName("ptt-ext")
	leasetest.Docker(t, host, "service", "create", "--detach", "--quiet", "--no-resolve-image", "--replicas", "0",
		"--name", external+"_svc", "--label", "com.docker.stack.namespace="+external, "127.0.0.1:1/none:1")
	removeService(t, host, external+"_svc")
	if got := create(t, fake, 1, external, swarm, nil); got.status != http.StatusConflict {
		t.Errorf("create over the external stack %s: %d %s, want 409", external, got.status, got.body)
	}
	if recs := fake.Stacks(); len(recs) != 1 || recs[0].Name != name {
		t.Errorf("records = %+v, want only %s", recs, name)
	}
}

// Swarm stacks are listed by SwarmID alone: a stack of endpoint 2 on the same Swarm shows up in
// endpoint 1's list, and no stack shows up for another Swarm ID. An update's endpointId
// re-associates the stack.
func TestStackListMatchesSwarmStacksOnSwarmIDOnly(t *testing.T) {
	host := leasetest.SwarmHost(t)
	fake := Start(t, Options{DockerHost: host, APIKeys: []string{testKey},
		Endpoints: []Endpoint{{ID: 1, Name: "local", Type: 1}, {ID: 2, Name: "again", Type: 1}}})
	swarm := swarmID(t, host)
	name := uniqueName("ptt-list")
	if got := create(t, fake, 2, name, swarm, nil); got.status != http.StatusOK {
		t.Fatalf("create: %d %s", got.status, got.body)
	}
	list := func(filters string) []struct {
		Name       string
		EndpointId int
		SwarmId    string
	} {
		got := send(t, http.MethodGet, fake.URL()+"/api/stacks?filters="+url.QueryEscape(filters), keyed(), nil)
		var out []struct {
			Name       string
			EndpointId int
			SwarmId    string
		}
		if err := json.Unmarshal([]byte(got.body), &out); err != nil {
			t.Fatalf("list %s: %d %s", filters, got.status, got.body)
		}
		return out
	}
	if got := list(`{"SwarmID":"` + swarm + `","EndpointID":1}`); len(got) != 1 || got[0].EndpointId != 2 || got[0].SwarmId != swarm {
		t.Errorf("endpoint 1's list = %+v, want the stack of endpoint 2", got)
	}
	if got := list(`{"SwarmID":"another","EndpointID":2}`); len(got) != 0 {
		t.Errorf("another Swarm's list = %+v, want none", got)
	}

	// An update through another endpoint re-associates the stack with it.
	id := fake.Stacks()[0].ID
	if got := send(t, http.MethodPut, fake.URL()+"/api/stacks/"+itoa(id)+"?endpointId=1", keyed(), map[string]any{"StackFileContent": idleFile}); got.status != http.StatusOK {
		t.Fatalf("update through endpoint 1: %d %s", got.status, got.body)
	}
	if rec := fake.Stacks()[0]; rec.EndpointID != 1 {
		t.Errorf("record after an update through endpoint 1 = %+v, want EndpointID 1", rec)
	}
}

// A deploy the docker CLI refuses answers 500 with its stderr as the message: a failed create
// saves no record, a failed update keeps the previous file and Env.
func TestFailedDeploysChangeNothing(t *testing.T) {
	host := leasetest.SwarmHost(t)
	fake := Start(t, Options{DockerHost: host, APIKeys: []string{testKey}})
	swarm := swarmID(t, host)
	// Refused while the CLI validates the file, before it creates anything on the engine.
	broken := "services:\n  x:\n    image: 127.0.0.1:1/none:1\n    bogus_key: 1\n"

	got := send(t, http.MethodPost, fake.URL()+"/api/stacks/create/swarm/string?endpointId=1", keyed(), map[string]any{
		"Name": uniqueName("ptt-bad"), "SwarmID": swarm, "StackFileContent": broken})
	if got.status != http.StatusInternalServerError || !strings.Contains(got.body, `Additional property bogus_key is not allowed`) {
		t.Fatalf("create of a broken file: %d %s, want 500 with the CLI's error", got.status, got.body)
	}
	if recs := fake.Stacks(); len(recs) != 0 {
		t.Fatalf("records after a failed create = %+v", recs)
	}

	name := uniqueName("ptt-upd")
	if got := create(t, fake, 1, name, swarm, []EnvVar{{Name: "VALUE", Value: "kept"}}); got.status != http.StatusOK {
		t.Fatalf("create: %d %s", got.status, got.body)
	}
	id := fake.Stacks()[0].ID
	got = send(t, http.MethodPut, fake.URL()+"/api/stacks/"+itoa(id)+"?endpointId=1", keyed(), map[string]any{
		"StackFileContent": broken, "Env": []EnvVar{{Name: "VALUE", Value: "lost"}}})
	if got.status != http.StatusInternalServerError || !strings.Contains(got.body, `Additional property bogus_key is not allowed`) {
		t.Fatalf("update with a broken file: %d %s, want 500", got.status, got.body)
	}
	if rec := fake.Stacks()[0]; rec.StackFileContent != idleFile || len(rec.Env) != 1 || rec.Env[0].Value != "kept" {
		t.Errorf("record after a failed update = %+v, want the previous file and Env", rec)
	}
	if v := label(t, host, name, "value"); v != "kept" {
		t.Errorf("service label after a failed update = %q, want kept", v)
	}
}

// The Docker passthrough answers the engine's own swarm inspect, info and service list.
func TestDockerPassthroughReachesTheEngine(t *testing.T) {
	host := leasetest.SwarmHost(t)
	fake := Start(t, Options{DockerHost: host, APIKeys: []string{testKey}})
	swarm := swarmID(t, host)
	for _, path := range []string{"swarm", "v1.41/swarm", "info"} {
		got := send(t, http.MethodGet, fake.URL()+"/api/endpoints/1/docker/"+path, keyed(), nil)
		if got.status != http.StatusOK || !strings.Contains(got.body, `"ID":"`+swarm+`"`) {
			t.Errorf("docker/%s: %d, want 200 holding the Swarm ID %s", path, got.status, swarm)
		}
	}
	filters := url.QueryEscape(`{"label":["com.docker.stack.namespace=ptt-none-` + randomHex(4) + `"]}`)
	if got := send(t, http.MethodGet, fake.URL()+"/api/endpoints/1/docker/services?filters="+filters, keyed(), nil); got.status != http.StatusOK || strings.TrimSpace(got.body) != "[]" {
		t.Errorf("docker/services of no stack: %d %s, want []", got.status, got.body)
	}
}
