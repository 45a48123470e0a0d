package portainer

import (
	"context"
	"errors"
	"net/http"
)

// token returns the JWT to send, logging in when there is none yet or when stale is the token
// Portainer just refused. The mutex is held across the login so that concurrent calls share one:
// Portainer bans an address for an hour after more than 10 logins in a second.
func (c *Client) token(ctx context.Context, stale Secret) (Secret, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jwt != "" && c.jwt != stale {
		return c.jwt, nil
	}
	c.jwt = ""
	var answer struct {
		JWT string `json:"jwt"`
	}
	cl := call{
		op:     "log in as " + c.user,
		method: http.MethodPost,
		path:   "/auth",
		body: struct {
			Username string
			Password string
		}{c.user, string(c.pass)},
		public:  true,
		also:    map[int]error{http.StatusUnprocessableEntity: ErrUnauthorized},
		secrets: []string{string(c.pass)},
	}
	// c.do would take c.mu again (for redaction); the login's exchange goes through send.
	payload, err := jsonBody(cl)
	if err != nil {
		return "", err
	}
	resp, err := c.send(ctx, cl, payload, "")
	if err != nil {
		return "", err
	}
	if resp.status != http.StatusOK {
		return "", apiError(cl, resp, c.knownSecretsLocked())
	}
	if err := decodeJSON(cl.op, resp.body, &answer); err != nil {
		return "", err
	}
	if answer.JWT == "" {
		return "", errors.New("portainer: " + cl.op + ": the answer holds no jwt; is Options.URL Portainer's address?")
	}
	c.jwt = Secret(answer.JWT)
	return c.jwt, nil
}
