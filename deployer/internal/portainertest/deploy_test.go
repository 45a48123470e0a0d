package portainertest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// A stack created through the fake runs on the test Swarm with ${GREETING} taken from Env; an
// update replaces Env (the service changes), and a delete removes the services and the record.
func TestStackDeploysUpdatesAndDeletesForReal(t *testing.T) {
	host := leasetest.SwarmHost(t)
	image := TinyImage(t, host)
	fake := Start(t, Options{DockerHost: host, APIKeys: []string{testKey}})
	name := uniqueName("ptt-real")
	file := "version: \"3.8\"\nservices:\n  app:\n    image: " + image + "\n    environment:\n      GREETING: ${GREETING}\n"
	service := name + "_app"
	greeting := func() string {
		return leasetest.Docker(t, host, "service", "inspect", "--format", "{{json .Spec.TaskTemplate.ContainerSpec.Env}}", service)
	}

	created := send(t, http.MethodPost, fake.URL()+"/api/stacks/create/swarm/string?endpointId=1", keyed(), map[string]any{
		"Name": name, "SwarmID": swarmID(t, host), "StackFileContent": file,
		"Env": []EnvVar{{Name: "GREETING", Value: "first"}},
	})
	if created.status != http.StatusOK {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	var stack struct{ Id int }
	if err := json.Unmarshal([]byte(created.body), &stack); err != nil {
		t.Fatal(err)
	}
	if got := greeting(); got != `["GREETING=first"]` {
		t.Fatalf("service env after create = %s, want GREETING=first", got)
	}
	waitFor(t, "the service's task running", 2*time.Minute, func() bool {
		return strings.Contains(leasetest.Docker(t, host, "service", "ps", "--format", "{{.CurrentState}}", service), "Running")
	})

	updated := send(t, http.MethodPut, fake.URL()+"/api/stacks/"+itoa(stack.Id)+"?endpointId=1", keyed(), map[string]any{
		"StackFileContent": file, "Env": []EnvVar{{Name: "GREETING", Value: "second"}},
	})
	if updated.status != http.StatusOK {
		t.Fatalf("update: %d %s", updated.status, updated.body)
	}
	if got := greeting(); got != `["GREETING=second"]` {
		t.Fatalf("service env after update = %s, want GREETING=second", got)
	}
	if recs := fake.Stacks(); len(recs) != 1 || len(recs[0].Env) != 1 || recs[0].Env[0].Value != "second" {
		t.Fatalf("records after update = %+v, want one with Env GREETING=second only", recs)
	}

	deleted := send(t, http.MethodDelete, fake.URL()+"/api/stacks/"+itoa(stack.Id)+"?endpointId=1", keyed(), nil)
	if deleted.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", deleted.status, deleted.body)
	}
	waitFor(t, "the stack's services gone", time.Minute, func() bool { return len(serviceNames(t, host, name)) == 0 })
	if recs := fake.Stacks(); len(recs) != 0 {
		t.Fatalf("records after delete = %+v, want none", recs)
	}
	again := send(t, http.MethodDelete, fake.URL()+"/api/stacks/"+itoa(stack.Id)+"?endpointId=1", keyed(), nil)
	if again.status != http.StatusNotFound {
		t.Fatalf("second delete: %d %s, want 404", again.status, again.body)
	}
}
