// Package pipeline holds the tests of the release pipeline outside Go code: the workflows
// (actionlint with shellcheck), .goreleaser.yaml (goreleaser check and a real release of a
// throwaway tag in a temporary clone), `go install …@vX.Y.Z` from a module proxy made of that
// clone, and `npm publish --dry-run` of the client. They run offline.
package pipeline
