// Package readme runs the README's commands as a reader would, from a fresh clone (the work
// tree's files, committed or not, copied to a temporary directory), in the README's order and
// with those of the pages its commands moved to (docs/commands.md, docs/http-api.md,
// docs/clients.md): the Quickstart's serve, run in 60 seconds (two replicas, the leader
// interrupted, the other taking over), the elections API with curl, the one-shot and
// operators' commands, the clients installed from a clone, and the browser sections' claim
// about CORS. Every ```sh block of those pages must be one it runs. Its tests need Go and curl,
// and for the TypeScript client bun, npm and Node.js; no Docker.
package readme
