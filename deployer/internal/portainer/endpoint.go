package portainer

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Endpoint returns one environment: a numeric idOrName is an ID (GET /api/endpoints/{id}),
// anything else a name (GET /api/endpoints?name=…). A missing one is an error matching
// ErrEndpointNotFound that names it.
func (c *Client) Endpoint(ctx context.Context, idOrName string) (Endpoint, error) {
	if idOrName == "" {
		return Endpoint{}, fmt.Errorf("portainer: endpoint: no ID or name given")
	}
	if id, err := strconv.Atoi(idOrName); err == nil {
		var ep Endpoint
		err := c.do(ctx, call{
			op:     fmt.Sprintf("endpoint %d", id),
			method: http.MethodGet,
			path:   fmt.Sprintf("/endpoints/%d", id),
			also:   map[int]error{http.StatusNotFound: ErrEndpointNotFound},
		}, &ep)
		return ep, err
	}
	var list []Endpoint
	op := fmt.Sprintf("endpoint %q", idOrName)
	err := c.do(ctx, call{
		op:     op,
		method: http.MethodGet,
		path:   "/endpoints",
		query:  url.Values{"name": {idOrName}, "excludeSnapshots": {"true"}},
	}, &list)
	if err != nil {
		return Endpoint{}, err
	}
	// The name filter is exact on the 2.2x line; match here too, so that a server that treats it
	// as a search cannot hand back a different environment.
	var found []Endpoint
	for _, ep := range list {
		if ep.Name == idOrName {
			found = append(found, ep)
		}
	}
	switch len(found) {
	case 0:
		return Endpoint{}, &notFoundError{op: op}
	case 1:
		return found[0], nil
	default:
		return Endpoint{}, fmt.Errorf("portainer: %s: %d environments have that name; give the numeric ID instead", op, len(found))
	}
}

// notFoundError is an environment name that no environment has. It reads "portainer: endpoint
// "NAME": not found" and matches ErrEndpointNotFound, without repeating the sentinel's own
// text: callers add what to do (see the deployer's settings), which would say it again.
type notFoundError struct{ op string }

func (e *notFoundError) Error() string { return "portainer: " + e.op + ": not found" }

// Is matches ErrEndpointNotFound.
func (e *notFoundError) Is(target error) bool { return target == ErrEndpointNotFound }
