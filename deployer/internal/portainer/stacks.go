package portainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Stacks lists the stack records of the Swarm (GET /api/stacks with the SwarmID and EndpointID
// filters). Portainer matches Swarm stacks on SwarmID alone, so the list can hold stacks of other
// endpoints on the same Swarm: use Owned to pick ours.
func (c *Client) Stacks(ctx context.Context, swarmID string, endpointID int) ([]Stack, error) {
	if swarmID == "" {
		return nil, errors.New("portainer: stacks: no Swarm ID given (see Client.SwarmID); without it Portainer would list every stack")
	}
	filters, err := json.Marshal(struct {
		SwarmID    string
		EndpointID int
	}{swarmID, endpointID})
	if err != nil {
		return nil, err
	}
	var stacks []Stack
	err = c.do(ctx, call{
		op:     "stacks of swarm " + swarmID,
		method: http.MethodGet,
		path:   "/stacks",
		query:  url.Values{"filters": {string(filters)}},
	}, &stacks)
	if stacks == nil && err == nil {
		stacks = []Stack{}
	}
	return stacks, err
}

// CreateSwarmStack creates a Swarm stack from a stack file: Portainer runs
// `docker stack deploy` and records the stack (POST /api/stacks/create/swarm/string; on 404 or
// 405 only, the pre-2.19 POST /api/stacks?type=1&method=string). A failed deploy is an
// *APIError whose Message is the docker CLI's stderr; a name already taken matches
// ErrConflict.
func (c *Client) CreateSwarmStack(ctx context.Context, endpointID int, r CreateStackRequest) (Stack, error) {
	op := "create stack " + r.Name
	switch {
	case r.Name == "":
		return Stack{}, errors.New("portainer: create stack: CreateStackRequest.Name is empty")
	case r.SwarmID == "":
		return Stack{}, fmt.Errorf("portainer: %s: CreateStackRequest.SwarmID is empty (see Client.SwarmID)", op)
	case r.StackFileContent == "":
		return Stack{}, fmt.Errorf("portainer: %s: CreateStackRequest.StackFileContent is empty", op)
	}
	endpoint := strconv.Itoa(endpointID)
	cl := call{
		op:     op,
		method: http.MethodPost,
		path:   "/stacks/create/swarm/string",
		query:  url.Values{"endpointId": {endpoint}},
		body: struct {
			Name             string
			SwarmID          string
			StackFileContent string
			Env              []wireEnvVar
		}{r.Name, r.SwarmID, r.StackFileContent, wireEnv(r.Env)},
		also:    map[int]error{http.StatusNotFound: ErrEndpointNotFound},
		secrets: secretValues(r.Env),
	}
	var stack Stack
	err := c.do(ctx, cl, &stack)
	if apiErr, ok := asAPIError(err); ok && (apiErr.StatusCode == http.StatusNotFound || apiErr.StatusCode == http.StatusMethodNotAllowed) {
		// Before 2.19 the creation path was POST /api/stacks with the type and method in the
		// query; the new path does not exist there.
		cl.path = "/stacks"
		cl.query = url.Values{"type": {strconv.Itoa(StackTypeSwarm)}, "method": {"string"}, "endpointId": {endpoint}}
		stack = Stack{}
		err = c.do(ctx, cl, &stack)
	}
	markSecret(stack.Env, r.Env)
	return stack, err
}

// UpdateStack redeploys a stack with a new stack file and environment (PUT
// /api/stacks/{id}?endpointId=N). r.Env replaces the stored environment as a whole.
func (c *Client) UpdateStack(ctx context.Context, stackID, endpointID int, r UpdateStackRequest) (Stack, error) {
	op := fmt.Sprintf("update stack %d", stackID)
	if r.StackFileContent == "" {
		return Stack{}, fmt.Errorf("portainer: %s: UpdateStackRequest.StackFileContent is empty", op)
	}
	var stack Stack
	err := c.do(ctx, call{
		op:     op,
		method: http.MethodPut,
		path:   fmt.Sprintf("/stacks/%d", stackID),
		query:  url.Values{"endpointId": {strconv.Itoa(endpointID)}},
		// Env goes whole, as a list even when empty: Portainer replaces the stored set with it.
		body: struct {
			StackFileContent string
			Env              []wireEnvVar
			Prune            bool
			PullImage        bool
		}{r.StackFileContent, wireEnv(r.Env), r.Prune, r.PullImage},
		also:    map[int]error{http.StatusNotFound: ErrStackNotFound},
		secrets: secretValues(r.Env),
	}, &stack)
	markSecret(stack.Env, r.Env)
	return stack, err
}

// DeleteStack removes a stack: Portainer runs `docker stack rm` and deletes the record
// (DELETE /api/stacks/{id}?endpointId=N). Volumes stay. A missing stack matches
// ErrStackNotFound.
func (c *Client) DeleteStack(ctx context.Context, stackID, endpointID int) error {
	return c.do(ctx, call{
		op:     fmt.Sprintf("delete stack %d", stackID),
		method: http.MethodDelete,
		path:   fmt.Sprintf("/stacks/%d", stackID),
		query:  url.Values{"endpointId": {strconv.Itoa(endpointID)}},
		also:   map[int]error{http.StatusNotFound: ErrStackNotFound},
	}, nil)
}
