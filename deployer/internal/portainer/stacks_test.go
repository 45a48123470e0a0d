package portainer_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// stackFile is one service with no replicas (nothing is pulled or run); ${TAG} lands in a label.
const stackFile = "version: \"3.8\"\nservices:\n  web:\n    image: 127.0.0.1:1/none:1\n    deploy:\n      replicas: 0\n      labels:\n        tag: \"${TAG}\"\n"

// uniqueStack is a stack name no other test uses.
func uniqueStack(t *testing.T, prefix string) string {
	t.Helper()
	return prefix + "-" + strings.ToLower(leasetest.Namespace(t))
}

// writes lists the fake's state-changing calls as "METHOD path status".
func writes(fake *portainertest.Server) []string {
	var out []string
	for _, w := range fake.Writes() {
		out = append(out, w.Method+" "+w.Path+" "+strconv.Itoa(w.Status))
	}
	return out
}

// Every call of a deploy's life against the fake on the test Swarm, with the API key and with a
// password: find the endpoint and the Swarm, create, list, refuse a second create, update
// (Env replaced), delete, and delete again.
func TestStackLifecycle(t *testing.T) {
	host := leasetest.SwarmHost(t)
	for _, mode := range []string{"api-key", "password"} {
		t.Run(mode, func(t *testing.T) {
			fake := portainertest.Start(t, fakeOptions(host))
			c := keyClient(t, fake)
			if mode == "password" {
				c = passwordClient(t, fake)
			}
			ctx := testContext(t)

			st, err := c.Status(ctx)
			if err != nil || st.Version != "2.23.0" {
				t.Fatalf("Status = %+v, %v", st, err)
			}
			ep, err := c.Endpoint(ctx, "local")
			if err != nil || ep.ID != 1 || ep.Type != portainer.EndpointTypeDocker {
				t.Fatalf("Endpoint(local) = %+v, %v", ep, err)
			}
			swarm, err := c.SwarmID(ctx, ep.ID)
			if want := leasetest.Docker(t, host, "info", "--format", "{{.Swarm.Cluster.ID}}"); err != nil || swarm != want {
				t.Fatalf("SwarmID = %q, %v; want %s", swarm, err, want)
			}

			name := uniqueStack(t, "ptc")
			created, err := c.CreateSwarmStack(ctx, ep.ID, portainer.CreateStackRequest{
				Name: name, SwarmID: swarm, StackFileContent: stackFile,
				Env: []portainer.EnvVar{{Name: "TAG", Value: "v1"}, {Name: "OLD", Value: "gone-after-update"}},
			})
			if err != nil || !portainer.Owned(created, swarm, ep.ID) || created.Name != name {
				t.Fatalf("CreateSwarmStack = %+v, %v", created, err)
			}
			if got := leasetest.Docker(t, host, "service", "inspect", "--format", `{{index .Spec.Labels "tag"}}`, name+"_web"); got != "v1" {
				t.Fatalf("service label tag = %q, want v1", got)
			}
			if w := writes(fake); !slices.Equal(w, []string{"POST /api/stacks/create/swarm/string 200"}) {
				t.Fatalf("writes = %v, want the typed creation path only", w)
			}

			stacks, err := c.Stacks(ctx, swarm, ep.ID)
			if err != nil || len(stacks) != 1 || stacks[0].ID != created.ID || len(stacks[0].Env) != 2 {
				t.Fatalf("Stacks = %+v, %v", stacks, err)
			}
			services, err := c.ExternalStackServices(ctx, ep.ID, name)
			if err != nil || !slices.Equal(services, []string{name + "_web"}) {
				t.Fatalf("ExternalStackServices = %v, %v", services, err)
			}
			if recs := fake.Stacks(); len(recs) != 1 || recs[0].StackFileContent != stackFile {
				t.Fatalf("records = %+v, want the stack file as sent", recs)
			}

			_, err = c.CreateSwarmStack(ctx, ep.ID, portainer.CreateStackRequest{Name: name, SwarmID: swarm, StackFileContent: stackFile})
			want := "portainer: create stack " + name + ": 409 Conflict: A stack with the normalized name '" + name + "' already exists"
			if !errors.Is(err, portainer.ErrConflict) || err.Error() != want {
				t.Fatalf("second create = %v, want %s", err, want)
			}

			updated, err := c.UpdateStack(ctx, created.ID, ep.ID, portainer.UpdateStackRequest{
				StackFileContent: stackFile, Env: []portainer.EnvVar{{Name: "TAG", Value: "v2"}},
			})
			if err != nil || len(updated.Env) != 1 || updated.Env[0] != (portainer.EnvVar{Name: "TAG", Value: "v2"}) {
				t.Fatalf("UpdateStack = %+v, %v; want Env TAG=v2 only", updated, err)
			}
			if recs := fake.Stacks(); len(recs) != 1 || len(recs[0].Env) != 1 {
				t.Fatalf("records after update = %+v, want Env replaced", recs)
			}
			if got := leasetest.Docker(t, host, "service", "inspect", "--format", `{{index .Spec.Labels "tag"}}`, name+"_web"); got != "v2" {
				t.Fatalf("service label tag after update = %q, want v2", got)
			}

			if err := c.DeleteStack(ctx, created.ID, ep.ID); err != nil {
				t.Fatalf("DeleteStack: %v", err)
			}
			if err := c.DeleteStack(ctx, created.ID, ep.ID); !errors.Is(err, portainer.ErrStackNotFound) {
				t.Fatalf("second DeleteStack = %v, want ErrStackNotFound", err)
			}
		})
	}
}

// A server before 2.19 answers 404 on the typed creation path: the client creates through the
// older POST /api/stacks?type=1&method=string — and only then.
func TestCreateFallsBackToThePre219Path(t *testing.T) {
	host := leasetest.SwarmHost(t)
	o := fakeOptions(host)
	o.Version = "2.18.4"
	fake := portainertest.Start(t, o)
	c := keyClient(t, fake)
	ctx := testContext(t)
	swarm, err := c.SwarmID(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	name := uniqueStack(t, "ptc-old")
	stack, err := c.CreateSwarmStack(ctx, 1, portainer.CreateStackRequest{Name: name, SwarmID: swarm, StackFileContent: stackFile})
	if err != nil || stack.Name != name {
		t.Fatalf("CreateSwarmStack on 2.18 = %+v, %v", stack, err)
	}
	want := []string{"POST /api/stacks/create/swarm/string 404", "POST /api/stacks 200"}
	if w := writes(fake); !slices.Equal(w, want) {
		t.Fatalf("writes = %v, want %v", w, want)
	}
	if q := fake.Writes()[1].Query; q != "endpointId=1&method=string&type=1" {
		t.Fatalf("old path's query = %s", q)
	}
}

// Endpoints that do not exist are ErrEndpointNotFound errors that name them; an engine in no
// Swarm is an error that says so; a status without /api/system/status comes from /api/status.
func TestEndpointAndSwarmErrors(t *testing.T) {
	plain := leasetest.PlainDockerHost(t)
	o := fakeOptions(plain)
	o.Version = "2.16.0"
	fake := portainertest.Start(t, o)
	c := keyClient(t, fake)
	ctx := testContext(t)
	if st, err := c.Status(ctx); err != nil || st.Version != "2.16.0" {
		t.Fatalf("Status on 2.16 = %+v, %v", st, err)
	}
	for idOrName, want := range map[string]string{"9": "endpoint 9", "nope": `endpoint "nope"`} {
		if _, err := c.Endpoint(ctx, idOrName); !errors.Is(err, portainer.ErrEndpointNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("Endpoint(%s) = %v, want ErrEndpointNotFound naming %s", idOrName, err, want)
		}
	}
	if _, err := c.SwarmID(ctx, 9); !errors.Is(err, portainer.ErrEndpointNotFound) {
		t.Errorf("SwarmID(9) = %v, want ErrEndpointNotFound", err)
	}
	if _, err := c.SwarmID(ctx, 1); err == nil || !strings.Contains(err.Error(), "not a Swarm manager") {
		t.Errorf("SwarmID of an engine in no Swarm = %v, want 'not a Swarm manager'", err)
	}
}
