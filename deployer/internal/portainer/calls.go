package portainer

import (
	"context"
	"errors"
)

var errNotImplemented = errors.New("portainer: not implemented yet")

// Status returns the server's version (GET /api/system/status; servers before 2.17 answer only
// the older GET /api/status, which the client falls back to on 404). It needs no credentials.
func (c *Client) Status(ctx context.Context) (Status, error) { return Status{}, errNotImplemented }

// Endpoint returns one environment: a numeric idOrName is an ID (GET /api/endpoints/{id}),
// anything else a name (GET /api/endpoints?name=…). A missing one is an error matching
// ErrEndpointNotFound that names it.
func (c *Client) Endpoint(ctx context.Context, idOrName string) (Endpoint, error) {
	return Endpoint{}, errNotImplemented
}

// SwarmID returns the cluster ID of the Swarm behind the endpoint, from Docker's swarm inspect
// through Portainer's Docker passthrough (falling back to docker info's Swarm.Cluster.ID). The
// inspect body holds the join tokens: it is decoded for the ID alone and never logged.
func (c *Client) SwarmID(ctx context.Context, endpointID int) (string, error) {
	return "", errNotImplemented
}

// Stacks lists the stack records of the Swarm (GET /api/stacks with the SwarmID and EndpointID
// filters). Portainer matches Swarm stacks on SwarmID alone, so the list can hold stacks of other
// endpoints on the same Swarm: use Owned to pick ours.
func (c *Client) Stacks(ctx context.Context, swarmID string, endpointID int) ([]Stack, error) {
	return nil, errNotImplemented
}

// ExternalStackServices returns the names of the endpoint's Swarm services labelled
// com.docker.stack.namespace=name, through the Docker passthrough. Services of a name that has
// no Portainer record are an external stack (deployed with `docker stack deploy`), which
// Portainer refuses to create over and the deployer must neither adopt nor delete.
func (c *Client) ExternalStackServices(ctx context.Context, endpointID int, name string) ([]string, error) {
	return nil, errNotImplemented
}

// StackFile returns the stack's current stack file (GET /api/stacks/{id}/file).
func (c *Client) StackFile(ctx context.Context, stackID int) (string, error) {
	return "", errNotImplemented
}

// CreateSwarmStack creates a Swarm stack from a stack file: Portainer runs
// `docker stack deploy` and records the stack (POST /api/stacks/create/swarm/string; on 404 or
// 405 only, the pre-2.19 POST /api/stacks?type=1&method=string). A failed deploy is an
// *APIError whose Message is the docker CLI's stderr; a name already taken matches
// ErrConflict.
func (c *Client) CreateSwarmStack(ctx context.Context, endpointID int, r CreateStackRequest) (Stack, error) {
	return Stack{}, errNotImplemented
}

// UpdateStack redeploys a stack with a new stack file and environment (PUT
// /api/stacks/{id}?endpointId=N). r.Env replaces the stored environment as a whole.
func (c *Client) UpdateStack(ctx context.Context, stackID, endpointID int, r UpdateStackRequest) (Stack, error) {
	return Stack{}, errNotImplemented
}

// DeleteStack removes a stack: Portainer runs `docker stack rm` and deletes the record
// (DELETE /api/stacks/{id}?endpointId=N). Volumes stay. A missing stack matches
// ErrStackNotFound.
func (c *Client) DeleteStack(ctx context.Context, stackID, endpointID int) error {
	return errNotImplemented
}
