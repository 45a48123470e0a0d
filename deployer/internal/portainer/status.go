package portainer

import (
	"context"
	"net/http"
)

// Status returns the server's version (GET /api/system/status; servers before 2.17 answer only
// the older GET /api/status, which the client falls back to on 404). It needs no credentials.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	err := c.do(ctx, call{op: "status", method: http.MethodGet, path: "/system/status", public: true}, &st)
	if apiErr, ok := asAPIError(err); ok && apiErr.StatusCode == http.StatusNotFound {
		st = Status{}
		err = c.do(ctx, call{op: "status", method: http.MethodGet, path: "/status", public: true}, &st)
	}
	return st, err
}
