// Package versionfiles reads and rewrites the one shared version of the repository wherever it
// lives: the "version" field of the root package.json and of every bun workspace package, the
// workspace entries of bun.lock, the [project] version of every Python package's
// pyproject.toml, the HTTP API's version (server/api.go's APIVersion and info.version of the
// committed OpenAPI document, clients/openapi.json), the requirements the Go workspace modules
// have on each other, and go.work's versioned replace lines that map those requirements to the
// work tree.
//
// The locations are discovered, not listed (but for the API's two): a package that joins the
// bun workspaces, a Python package with a pyproject.toml up to two directories below the root,
// or a module that joins go.work carries the version from then on without a change here.
package versionfiles
