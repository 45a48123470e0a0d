// Package portainer is the deployer's typed client for the Portainer CE HTTP API (2.19–2.23,
// with fallbacks for older servers where a call moved). It covers the calls a Swarm stack
// deployment needs: the server's status, an environment (endpoint) and its Swarm ID, the
// stacks recorded for that Swarm, the services of a stack deployed outside Portainer, and
// creating, updating and deleting a Swarm stack.
//
// Trust model: credentials (an API key, or a username and password exchanged once for a JWT)
// travel only in request headers, never in a URL, an error or a log line; the HTTP client keeps
// no cookies, because Portainer's login cookie would subject every later request to a CSRF check
// that an API client cannot pass. Response bodies are read through a size limit, and the body of
// Docker's swarm inspect — which holds the join tokens — is decoded for its ID only.
package portainer
