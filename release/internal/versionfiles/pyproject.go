package versionfiles

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A Python package states its version in its pyproject.toml, as the static `version = "X.Y.Z"`
// line of the [project] table (PEP 621), which is what the build backend puts into the sdist
// and the wheel. The rewrite changes that one line and keeps the rest of the file byte for byte.

// pythonProjectGlobs are where Python packages are found: a pyproject.toml at the root, or one
// or two directories below it (clients/python today).
var pythonProjectGlobs = []string{"pyproject.toml", "*/pyproject.toml", "*/*/pyproject.toml"}

// pythonProjects returns the pyproject.toml files of root, relative to it, with forward
// slashes, sorted; those below a node_modules directory are not the repository's.
func pythonProjects(root string) ([]string, error) {
	var files []string
	for _, pattern := range pythonProjectGlobs {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, fmt.Errorf("versionfiles: %s: %w", pattern, err)
		}
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			if err != nil {
				return nil, err
			}
			rel = filepath.ToSlash(rel)
			if !slices.Contains(strings.Split(path.Dir(rel), "/"), "node_modules") {
				files = append(files, rel)
			}
		}
	}
	slices.Sort(files)
	return files, nil
}

var (
	tomlTable         = regexp.MustCompile(`^\[\s*([^\]]*?)\s*\]\s*(#.*)?$`)
	pyprojectVersion  = regexp.MustCompile(`^version\s*=\s*"([^"]*)"\s*(#.*)?$`)
	pyprojectDynamic  = regexp.MustCompile(`^dynamic\s*=.*"version"`)
	pyprojectAnyField = regexp.MustCompile(`^version\s*=`)
)

// pyprojectVersionLine returns the byte range of the version value in the [project] table of
// a pyproject.toml.
func pyprojectVersionLine(file string, content []byte) (start, end int, err error) {
	inProject := false
	offset := 0
	for _, line := range bytes.SplitAfter(content, []byte("\n")) {
		text := strings.TrimRight(string(line), "\r\n")
		if m := tomlTable.FindStringSubmatch(text); m != nil {
			inProject = m[1] == "project"
		} else if inProject {
			if pyprojectDynamic.MatchString(text) {
				return 0, 0, fmt.Errorf(`versionfiles: %s: the version is dynamic; state it as a line version = "X.Y.Z" in [project], with the repository's current version`, file)
			}
			if m := pyprojectVersion.FindStringSubmatchIndex(text); m != nil {
				return offset + m[2], offset + m[3], nil
			}
			if pyprojectAnyField.MatchString(text) {
				return 0, 0, fmt.Errorf(`versionfiles: %s: the version must be one line version = "X.Y.Z" in [project]`, file)
			}
		}
		offset += len(line)
	}
	return 0, 0, fmt.Errorf(`versionfiles: %s: no "version" in [project]; add version = "X.Y.Z" with the repository's current version`, file)
}
