package versionfiles

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
)

// topLevelVersion matches the "version" field of a package.json written the way npm and bun
// write it (two-space indentation), so the rewrite changes that one line and keeps the rest of
// the file byte for byte.
var topLevelVersion = regexp.MustCompile(`(?m)^  "version": "([^"]*)"`)

// packageJSON is what this package needs from a package.json.
type packageJSON struct {
	Name       string   `json:"name"`
	Version    *string  `json:"version"`
	Workspaces []string `json:"workspaces"`
}

func parsePackageJSON(file string, content []byte) (packageJSON, error) {
	var p packageJSON
	if err := json.Unmarshal(content, &p); err != nil {
		return p, fmt.Errorf("versionfiles: %s: not valid JSON: %w", file, err)
	}
	if p.Version == nil {
		return p, fmt.Errorf(`versionfiles: %s: no "version" field; add "version": "X.Y.Z" with the repository's current version`, file)
	}
	m := topLevelVersion.FindSubmatch(content)
	if m == nil || string(m[1]) != *p.Version {
		return p, fmt.Errorf(`versionfiles: %s: the "version" field must be a top-level line "  \"version\": \"X.Y.Z\"" (two-space indentation, as bun and npm write it)`, file)
	}
	return p, nil
}

func setPackageJSONVersion(content []byte, version string) []byte {
	done := false
	return topLevelVersion.ReplaceAllFunc(content, func(match []byte) []byte {
		if done {
			return match
		}
		done = true
		return fmt.Appendf(nil, `  "version": "%s"`, version)
	})
}

// workspacePackages returns the directories of the bun workspaces named by the root
// package.json, relative to root, with forward slashes, sorted.
func workspacePackages(root string, rootPkg packageJSON) ([]string, error) {
	var dirs []string
	for _, pattern := range rootPkg.Workspaces {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			return nil, fmt.Errorf("versionfiles: package.json: workspace pattern %q: %w", pattern, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("versionfiles: package.json: workspace %q matches no directory", pattern)
		}
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			if err != nil {
				return nil, err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
		}
	}
	slices.Sort(dirs)
	return slices.Compact(dirs), nil
}

func packageJSONPath(dir string) string { return path.Join(dir, "package.json") }
