// Package readme runs the README's commands as a reader would, from a fresh clone (the work
// tree's files, committed or not, copied to a temporary directory): the Quickstart on the file
// store, the clients' installation from a clone before a release is published, and the browser
// section's claim about CORS. Its tests need Go and, for the TypeScript client, bun, npm and
// Node.js; no Docker.
package readme
