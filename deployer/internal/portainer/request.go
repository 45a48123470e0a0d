package portainer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/redact"
)

// Body limits: every read of a response goes through one, so a broken or hostile server cannot
// make the client buffer without end. A stack list or stack file is large at a few MiB.
const (
	maxResponseBytes = 32 << 20
	maxErrorBytes    = 64 << 10
	// maxErrorText bounds a non-JSON error body quoted in an APIError.
	maxErrorText = 512
)

// call is one API request as the methods describe it.
type call struct {
	op     string // for errors, e.g. "create stack demo"
	method string
	path   string // below /api, e.g. "/stacks"
	query  url.Values
	body   any
	// public calls carry no credentials (GET /api/system/status).
	public bool
	// also: the sentinels this call's statuses mean beyond the common ones (see APIError).
	also map[int]error
	// secrets are values of this call that must be redacted from its errors (secret Env).
	secrets []string
}

// response is a read answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends cl, logging in first when needed and once more when Portainer answers 401 to a JWT,
// and decodes a 2xx body into out (when not nil). A non-2xx answer is an *APIError.
func (c *Client) do(ctx context.Context, cl call, out any) error {
	payload, err := jsonBody(cl)
	if err != nil {
		return err
	}
	var token Secret
	if !cl.public && c.apiKey == "" {
		if token, err = c.token(ctx, ""); err != nil {
			return err
		}
	}
	resp, err := c.send(ctx, cl, payload, token)
	if err != nil {
		return err
	}
	if resp.status == http.StatusUnauthorized && token != "" {
		// The JWT expired (8 h) or the server restarted: log in again, once.
		if token, err = c.token(ctx, token); err != nil {
			return err
		}
		if resp, err = c.send(ctx, cl, payload, token); err != nil {
			return err
		}
	}
	if resp.status < 200 || resp.status > 299 {
		// The token this call sent too: a concurrent re-login may have replaced it already.
		return apiError(cl, resp, append(c.knownSecrets(), string(token)))
	}
	return decodeJSON(cl.op, resp.body, out)
}

// jsonBody encodes cl's body (nil: none).
func jsonBody(cl call) ([]byte, error) {
	if cl.body == nil {
		return nil, nil
	}
	payload, err := json.Marshal(cl.body)
	if err != nil {
		return nil, fmt.Errorf("portainer: %s: encoding the request: %w", cl.op, err)
	}
	return payload, nil
}

// decodeJSON decodes a 2xx body into out; an empty body or a nil out decodes nothing.
func decodeJSON(op string, body []byte, out any) error {
	if out == nil || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		// The JSON error names a type or a character, never the body's text (which may be the
		// swarm inspect, with its join tokens).
		return fmt.Errorf("portainer: %s: the answer is not the JSON expected (%v); is Options.URL Portainer's address?", op, err)
	}
	return nil
}

// send makes one HTTP exchange and reads the body within its limit.
func (c *Client) send(ctx context.Context, cl call, payload []byte, token Secret) (response, error) {
	u := *c.base
	u.Path += cl.path
	u.RawQuery = cl.query.Encode()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u.String(), body)
	if err != nil {
		return response{}, fmt.Errorf("portainer: %s: %w", cl.op, err)
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if !cl.public {
		if c.apiKey != "" {
			req.Header.Set("X-API-Key", string(c.apiKey))
		} else {
			req.Header.Set("Authorization", "Bearer "+string(token))
		}
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return response{}, c.transportError(ctx, cl.op, err)
	}
	defer resp.Body.Close()
	limit := int64(maxResponseBytes)
	if resp.StatusCode > 299 {
		limit = maxErrorBytes
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	c.log.DebugContext(ctx, "portainer request", "op", cl.op, "method", cl.method, "path", u.Path,
		"status", resp.StatusCode, "duration", time.Since(start))
	if err != nil {
		return response{}, c.transportError(ctx, cl.op, err) // the connection broke mid-answer
	}
	if int64(len(data)) > limit {
		if resp.StatusCode > 299 {
			data = data[:limit] // an error body is only quoted, cut short anyway
		} else {
			return response{}, fmt.Errorf("portainer: %s: the answer is larger than %d MiB; refusing to read it", cl.op, maxResponseBytes>>20)
		}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// apiError builds the *APIError of a non-2xx answer, with the client's credentials (known) and
// the call's secrets redacted from the text Portainer sent — before a plain-text body is cut
// to its bounded size, since a cut through a secret would leave a part that is harder to find.
// Portainer's error body, {"message","details"}, is read as such whatever its Content-Type
// (a proxy may relabel it), so the fields are redacted decoded. Surrounding white space goes:
// a failed deploy's message is the docker CLI's stderr, which ends in a newline.
func apiError(cl call, resp response, known []string) *APIError {
	e := &APIError{Op: cl.op, StatusCode: resp.status, also: cl.also}
	secrets := append(known, cl.secrets...)
	var body struct {
		Message string `json:"message"`
		Details string `json:"details"`
	}
	if json.Unmarshal(resp.body, &body) == nil && body.Message+body.Details != "" {
		e.Message = strings.TrimSpace(redact.Text(body.Message, secrets...))
		e.Details = strings.TrimSpace(redact.Text(body.Details, secrets...))
		return e
	}
	e.Message = truncate(strings.TrimSpace(redact.Text(string(resp.body), secrets...)), maxErrorText)
	return e
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (truncated)"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// knownSecrets are the client's credentials, for redaction.
func (c *Client) knownSecrets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.knownSecretsLocked()
}

// knownSecretsLocked is knownSecrets with c.mu held.
func (c *Client) knownSecretsLocked() []string {
	return []string{string(c.apiKey), string(c.pass), string(c.jwt)}
}

// secretValues are the values of env marked Secret.
func secretValues(env []EnvVar) []string {
	var out []string
	for _, v := range env {
		if v.Secret {
			out = append(out, v.Value)
		}
	}
	return out
}

// asAPIError returns err's *APIError, if any.
func asAPIError(err error) (*APIError, bool) {
	var apiErr *APIError
	ok := errors.As(err, &apiErr)
	return apiErr, ok
}
