package versionfiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// The HTTP API carries the product's version too, in two files that must not drift from it
// (/docs shows it): the constant the server makes its OpenAPI document from, and that document
// as committed for the clients, whose info.version the server's tests keep equal to what the
// server serves. Both rewrites change the one version string and keep the rest byte for byte.

const (
	// apiVersionFile holds `const APIVersion = "X.Y.Z"`.
	apiVersionFile = "server/api.go"
	// contractFile is the committed OpenAPI document (`lfp-swarm-lease openapi` writes it).
	contractFile = "clients/openapi.json"
)

var apiVersionConst = regexp.MustCompile(`(?m)^const APIVersion = "([^"]*)"$`)

// apiVersionRange returns the byte range of the version in server/api.go's APIVersion.
func apiVersionRange(content []byte) (start, end int, err error) {
	m := apiVersionConst.FindAllSubmatchIndex(content, -1)
	if len(m) != 1 {
		return 0, 0, fmt.Errorf(`versionfiles: %s: want one line const APIVersion = "X.Y.Z", found %d`, apiVersionFile, len(m))
	}
	return m[0][2], m[0][3], nil
}

// The document is `json.MarshalIndent(…, "", "  ")` with sorted keys: the top-level "info"
// object opens with `  "info": {` and closes with `  },`, and its version is the line
// `    "version": "X.Y.Z"` between them.
var (
	contractInfoOpen  = []byte("\n  \"info\": {\n")
	contractInfoClose = []byte("\n  }")
	contractVersion   = regexp.MustCompile(`(?m)^    "version": "([^"]*)",?$`)
)

// contractVersionRange returns the byte range of info.version in the OpenAPI document, and
// checks it against the document as JSON.
func contractVersionRange(content []byte) (start, end int, err error) {
	var doc struct {
		Info struct {
			Version *string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(content, &doc); err != nil {
		return 0, 0, fmt.Errorf("versionfiles: %s: not valid JSON: %w", contractFile, err)
	}
	if doc.Info.Version == nil {
		return 0, 0, fmt.Errorf("versionfiles: %s: no info.version; regenerate it with `go run ./cli/cmd/lfp-swarm-lease openapi > %s`", contractFile, contractFile)
	}
	open := bytes.Index(content, contractInfoOpen)
	if open < 0 {
		return 0, 0, fmt.Errorf("versionfiles: %s: no top-level \"info\" object in the layout `lfp-swarm-lease openapi` writes; regenerate the file", contractFile)
	}
	open += len(contractInfoOpen)
	closing := bytes.Index(content[open:], contractInfoClose)
	if closing < 0 {
		return 0, 0, fmt.Errorf("versionfiles: %s: the \"info\" object does not close; regenerate the file", contractFile)
	}
	m := contractVersion.FindSubmatchIndex(content[open : open+closing])
	if m == nil || string(content[open+m[2]:open+m[3]]) != *doc.Info.Version {
		return 0, 0, fmt.Errorf("versionfiles: %s: info.version is not the line `    \"version\": \"X.Y.Z\"` that `lfp-swarm-lease openapi` writes; regenerate the file", contractFile)
	}
	return open + m[2], open + m[3], nil
}

// versionAt reads the version in content at the range that find returns.
func versionAt(content []byte, find func([]byte) (int, int, error)) (string, error) {
	start, end, err := find(content)
	if err != nil {
		return "", err
	}
	return string(content[start:end]), nil
}

// setVersionAt replaces the version in content at the range that find returns.
func setVersionAt(content []byte, find func([]byte) (int, int, error), version string) ([]byte, error) {
	start, end, err := find(content)
	if err != nil {
		return nil, err
	}
	out := append([]byte{}, content[:start]...)
	out = append(out, version...)
	return append(out, content[end:]...), nil
}

// rangedFile is a version file whose version sits at the range that find returns; what is
// what the location is called in messages.
type rangedFile struct {
	file, what string
	find       func([]byte) (int, int, error)
}

// apiVersionFiles are the HTTP API's version files.
var apiVersionFiles = []rangedFile{
	{apiVersionFile, "APIVersion", apiVersionRange},
	{contractFile, "info.version", contractVersionRange},
}
