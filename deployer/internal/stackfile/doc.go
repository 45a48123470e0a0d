// Package stackfile renders the demo's stack file (deploy/stack.yml) for Portainer: the
// variables it is deployed with — the demo image pinned to a digest, the lease's TTL, the
// replicas, the network settings — and the stack as the compose-spec library reads it with
// them, which validates it before anything remote changes.
//
// Portainer gets the stack file unchanged and the variables as the stack's Env, so the stack
// stays editable in Portainer's UI and a redeploy with new variables is an update of the same
// file. Portainer runs `docker stack deploy` with its own process environment plus Env, so Env
// holds every variable the file uses (read from the file), those without a setting at the
// file's defaults: none is left to Portainer's environment.
package stackfile
