package portainer

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
)

// SwarmID returns the cluster ID of the Swarm behind the endpoint, from Docker's swarm inspect
// through Portainer's Docker passthrough (GET /api/endpoints/{id}/docker/swarm), falling back to
// docker info's Swarm.Cluster.ID when the inspect fails for a reason other than credentials. The
// inspect body holds the join tokens: it is decoded for the ID alone and never logged or quoted.
func (c *Client) SwarmID(ctx context.Context, endpointID int) (string, error) {
	notFound := map[int]error{http.StatusNotFound: ErrEndpointNotFound}
	var inspect struct {
		ID string `json:"ID"`
	}
	err := c.do(ctx, call{
		op:     fmt.Sprintf("swarm of endpoint %d", endpointID),
		method: http.MethodGet,
		path:   fmt.Sprintf("/endpoints/%d/docker/swarm", endpointID),
		also:   notFound,
	}, &inspect)
	if err == nil && inspect.ID != "" {
		return inspect.ID, nil
	}
	if apiErr, ok := asAPIError(err); err != nil && (!ok || apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden) {
		return "", err
	}
	var info struct {
		Swarm struct {
			LocalNodeState   string
			ControlAvailable bool
			Cluster          *struct {
				ID string `json:"ID"`
			}
		}
	}
	op := fmt.Sprintf("docker info of endpoint %d", endpointID)
	if err := c.do(ctx, call{
		op:     op,
		method: http.MethodGet,
		path:   fmt.Sprintf("/endpoints/%d/docker/info", endpointID),
		also:   notFound,
	}, &info); err != nil {
		return "", err
	}
	if info.Swarm.Cluster == nil || info.Swarm.Cluster.ID == "" || !info.Swarm.ControlAvailable {
		state := cmp.Or(info.Swarm.LocalNodeState, "unknown")
		return "", fmt.Errorf("portainer: %s: the environment's engine is not a Swarm manager (Swarm state %q); deploy to an environment whose engine is a manager of the Swarm", op, state)
	}
	return info.Swarm.Cluster.ID, nil
}

// stackNamespaceLabel is the label `docker stack deploy` puts on a stack's services.
const stackNamespaceLabel = "com.docker.stack.namespace"

// ExternalStackServices returns the names of the endpoint's Swarm services labelled
// com.docker.stack.namespace=name, through the Docker passthrough (sorted). Services of a name
// that has no Portainer record are an external stack (deployed with `docker stack deploy`),
// which Portainer refuses to create over and the deployer must neither adopt nor delete.
func (c *Client) ExternalStackServices(ctx context.Context, endpointID int, name string) ([]string, error) {
	filters, err := json.Marshal(map[string][]string{"label": {stackNamespaceLabel + "=" + name}})
	if err != nil {
		return nil, err
	}
	var services []struct {
		Spec struct {
			Name string
		}
	}
	if err := c.do(ctx, call{
		op:     fmt.Sprintf("services of stack %s on endpoint %d", name, endpointID),
		method: http.MethodGet,
		path:   fmt.Sprintf("/endpoints/%d/docker/services", endpointID),
		query:  url.Values{"filters": {string(filters)}},
		also:   map[int]error{http.StatusNotFound: ErrEndpointNotFound},
	}, &services); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(services))
	for _, s := range services {
		names = append(names, s.Spec.Name)
	}
	sort.Strings(names)
	return names, nil
}
