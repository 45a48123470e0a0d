// Package portainertest is an in-process fake of the Portainer CE HTTP API that deploys for
// real: its stacks are `docker stack deploy` runs against a real Docker engine (in tests, the
// test Swarm), so a deployer test sees real services appear, change and go.
//
// It follows the parts of the API the deployer's client uses, with Portainer's observable
// behaviour: the two authentication modes and their failures (unknown API key → 401, bad login →
// 422, both headers → 403, login flood → 403 "Access denied", the login cookie's CSRF check),
// Swarm stack filtering on SwarmID alone, name normalisation, 409 on a name taken by a stack
// record or by an external stack on the engine, the pre-2.19 creation path, the error body
// {"message","details"}, and the Docker passthrough (swarm, info, services) proxied to the
// engine.
package portainertest
