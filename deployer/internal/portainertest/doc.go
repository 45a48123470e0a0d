// Package portainertest is an in-process fake of the Portainer CE HTTP API that deploys for
// real: its stacks are `docker stack deploy` runs against a real Docker engine (in tests, the
// test Swarm), so a deployer test sees real services appear, change and go.
//
// It follows the parts of the API the deployer's client uses, with the answers of a real
// Portainer CE 2.23.0 (docs/portainer.md lists where they differ from a guess): the two
// authentication modes and their failures (unknown API key → 401, bad login → 422, both
// headers → 403 on every route, login flood → 403 "Access denied", the login cookie's CSRF
// check of writes), Swarm stack filtering on SwarmID alone, name normalisation, 409 on a name
// taken by a record of the same endpoint or by a stack or Compose project on the engine, the
// pre-2.19 creation path, the error body {"message","details"} with Portainer's details, the
// deploy as Portainer runs it (its own environment plus the stack's Env; a failure answers the
// CLI's stderr), and the Docker passthrough (swarm, info, services) proxied to the engine.
package portainertest
