package versionfiles

import (
	"bytes"
	"fmt"
	"regexp"
)

// bun.lock is JSONC (trailing commas), which encoding/json refuses, and bun writes it in one
// fixed layout: a workspace's entry opens with `    "DIR": {` and its version is the
// `      "version": "X.Y.Z",` line that follows before the entry closes with `    },`. The
// rewrite changes that line only, which is what `bun install` itself changes after a bump.

func bunLockEntry(content []byte, dir string) (start, end int, err error) {
	open := fmt.Appendf(nil, "\n    %q: {\n", dir)
	start = bytes.Index(content, open)
	if start < 0 {
		return 0, 0, fmt.Errorf("versionfiles: bun.lock: no workspace entry for %q; run `bun install` to update the lockfile", dir)
	}
	start += len(open)
	closing := bytes.Index(content[start:], []byte("\n    },"))
	if closing < 0 {
		return 0, 0, fmt.Errorf("versionfiles: bun.lock: the workspace entry for %q does not close; run `bun install` to rewrite the lockfile", dir)
	}
	return start, start + closing, nil
}

var bunLockVersion = regexp.MustCompile(`(?m)^      "version": "([^"]*)",$`)

func bunLockWorkspaceVersion(content []byte, dir string) (string, error) {
	start, end, err := bunLockEntry(content, dir)
	if err != nil {
		return "", err
	}
	m := bunLockVersion.FindSubmatch(content[start:end])
	if m == nil {
		return "", fmt.Errorf("versionfiles: bun.lock: the workspace entry for %q has no version; run `bun install` after setting the package's version", dir)
	}
	return string(m[1]), nil
}

func setBunLockWorkspaceVersion(content []byte, dir, version string) ([]byte, error) {
	start, end, err := bunLockEntry(content, dir)
	if err != nil {
		return nil, err
	}
	loc := bunLockVersion.FindSubmatchIndex(content[start:end])
	if loc == nil {
		return nil, fmt.Errorf("versionfiles: bun.lock: the workspace entry for %q has no version", dir)
	}
	out := append([]byte{}, content[:start+loc[2]]...)
	out = append(out, version...)
	return append(out, content[start+loc[3]:]...), nil
}
