package versionfiles_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
	"github.com/regbo/lfp-swarm-lease/release/internal/versionfiles"
)

func copyRepo(t *testing.T) string { return testrepo.CopyVersionFiles(t) }

// This repository's own version files agree.
func TestRepositoryVersionFilesAgree(t *testing.T) {
	r, err := versionfiles.Open(testrepo.SourceRoot())
	if err != nil {
		t.Fatal(err)
	}
	locs, err := r.Locations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := versionfiles.Agreed(locs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package.json", "clients/typescript/package.json", "bun.lock", "clients/python/pyproject.toml", "cli/go.mod", "go.work",
		"server/api.go", "clients/openapi.json"} {
		found := false
		for _, l := range locs {
			found = found || l.File == want
		}
		if !found {
			t.Errorf("no version location in %s; found %v", want, locs)
		}
	}
}

func TestSetVersionChangesOnlyTheVersionLines(t *testing.T) {
	root := copyRepo(t)
	r, err := versionfiles.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	locs, _ := r.Locations()
	old, err := versionfiles.Agreed(locs)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := r.SetVersion("1.8.9")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		oldLines, newLines := strings.Split(string(c.Old), "\n"), strings.Split(string(c.New), "\n")
		if len(oldLines) != len(newLines) {
			t.Fatalf("%s: %d lines became %d", c.File, len(oldLines), len(newLines))
		}
		for i := range oldLines {
			if oldLines[i] == newLines[i] {
				continue
			}
			if strings.ReplaceAll(oldLines[i], old.String(), "1.8.9") != newLines[i] {
				t.Errorf("%s:%d: %q became %q; only the version may change", c.File, i+1, oldLines[i], newLines[i])
			}
		}
	}
	if err := versionfiles.Apply(root, changes); err != nil {
		t.Fatal(err)
	}
	r, err = versionfiles.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	locs, err = r.Locations()
	if err != nil {
		t.Fatal(err)
	}
	v, err := versionfiles.Agreed(locs)
	if err != nil || v.String() != "1.8.9" {
		t.Fatalf("after SetVersion: %v, %v", v, err)
	}
}

func TestDisagreeingVersionsNameTheFiles(t *testing.T) {
	_, err := versionfiles.Agreed([]versionfiles.Location{{File: "package.json", What: "version", Version: "1.0.0"}, {File: "lease/go.mod", What: "require x", Version: "1.0.1"}})
	if err == nil || !strings.Contains(err.Error(), "package.json") || !strings.Contains(err.Error(), "lease/go.mod") {
		t.Fatalf("err = %v, want one naming both files", err)
	}
}

func TestMissingVersionFieldIsAClearError(t *testing.T) {
	root := copyRepo(t)
	p := filepath.Join(root, "clients/typescript/package.json")
	content, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(content), `  "version": "`, `  "versio": "`, 1)), 0o644)
	r, err := versionfiles.Open(root)
	if err == nil {
		_, err = r.Locations()
	}
	if err == nil || !strings.Contains(err.Error(), "clients/typescript/package.json") || !strings.Contains(err.Error(), `"version"`) {
		t.Fatalf("err = %v, want one naming the file and the field", err)
	}
}

func TestMajorVersionTwoIsRefused(t *testing.T) {
	r, err := versionfiles.Open(copyRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.SetVersion("2.0.0"); err == nil || !strings.Contains(err.Error(), "/v2") {
		t.Fatalf("SetVersion(2.0.0) = %v, want an error about /v2 module paths", err)
	}
}

// The Python package's version: its one line in [project], not a version elsewhere in the file.
func TestPyprojectVersion(t *testing.T) {
	root := copyRepo(t)
	p := filepath.Join(root, "clients/python/pyproject.toml")
	content, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// A version line in another table must stay as it is.
	content = append(content, []byte("\n[tool.other]\nversion = \"9.9.9\"\n")...)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := versionfiles.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := r.SetVersion("0.3.0")
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, c := range changes {
		if c.File == "clients/python/pyproject.toml" {
			got = c.New
		}
	}
	if !strings.Contains(string(got), "\nversion = \"0.3.0\"\n") || !strings.Contains(string(got), "[tool.other]\nversion = \"9.9.9\"") {
		t.Fatalf("clients/python/pyproject.toml after SetVersion(0.3.0):\n%s", got)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"missing", "\nversion = ", "\nversio = ", `no "version" in [project]`},
		{"dynamic", "\nversion = \"0.1.0\"\n", "\ndynamic = [\"version\"]\n", "the version is dynamic"},
		{"not a string", "\nversion = \"0.1.0\"\n", "\nversion = 1\n", "one line version ="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyRepo(t)
			p := filepath.Join(root, "clients/python/pyproject.toml")
			content, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(content), tc.from, tc.to, 1)), 0o644)
			r, err := versionfiles.Open(root)
			if err == nil {
				_, err = r.Locations()
			}
			if err == nil || !strings.Contains(err.Error(), "clients/python/pyproject.toml") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming the file and %q", err, tc.want)
			}
		})
	}
}

// A release bump sets the HTTP API's version with every other version file: the constant the
// server makes its OpenAPI document from and the committed document's info.version, so /docs
// can never show another version than the product's. Nothing else in either file changes.
func TestSetVersionSetsTheAPIVersion(t *testing.T) {
	root := copyRepo(t)
	r, err := versionfiles.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := r.SetVersion("0.4.2")
	if err != nil {
		t.Fatal(err)
	}
	changed := map[string]versionfiles.Change{}
	for _, c := range changes {
		changed[c.File] = c
	}
	api, ok := changed["server/api.go"]
	if !ok || !strings.Contains(string(api.New), "\nconst APIVersion = \"0.4.2\"\n") {
		t.Fatalf("server/api.go after SetVersion(0.4.2): changed %v\n%s", ok, api.New)
	}
	contract, ok := changed["clients/openapi.json"]
	if !ok {
		t.Fatal("SetVersion(0.4.2) leaves clients/openapi.json unchanged")
	}
	var before, after map[string]any
	if err := json.Unmarshal(contract.Old, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(contract.New, &after); err != nil {
		t.Fatalf("clients/openapi.json after SetVersion is not JSON: %v", err)
	}
	if v := after["info"].(map[string]any)["version"]; v != "0.4.2" {
		t.Fatalf("clients/openapi.json info.version = %v, want 0.4.2", v)
	}
	before["info"].(map[string]any)["version"] = "0.4.2"
	if !reflect.DeepEqual(before, after) {
		t.Fatal("clients/openapi.json: SetVersion changed more than info.version")
	}
	if err := versionfiles.Apply(root, changes); err != nil {
		t.Fatal(err)
	}
	_, locs, err := versionfiles.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, l := range locs {
		if l.File == "server/api.go" || l.File == "clients/openapi.json" {
			found++
			if l.Version != "0.4.2" {
				t.Errorf("%s after the bump", l)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d API version locations, want 2: %v", found, locs)
	}
}

// An API version that drifted is named like any other version file, and one that cannot be
// found is an error naming the file, never a location silently left out.
func TestAPIVersionFiles(t *testing.T) {
	for _, tc := range []struct{ name, file, from, to, want string }{
		{"drifted constant", "server/api.go", `const APIVersion = "0.1.0"`, `const APIVersion = "1.0.0"`, ""},
		{"drifted document", "clients/openapi.json", `    "version": "0.1.0"`, `    "version": "1.0.0"`, ""},
		{"no constant", "server/api.go", `const APIVersion = "0.1.0"`, `const APIVersion = version`, "one line const APIVersion"},
		{"no info.version", "clients/openapi.json", `    "version": "0.1.0"`, `    "versio": "0.1.0"`, "no info.version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyRepo(t)
			p := filepath.Join(root, tc.file)
			content, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(content), tc.from) {
				t.Fatalf("%s has no %q", tc.file, tc.from)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(content), tc.from, tc.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, locs, err := versionfiles.Read(root)
			if tc.want == "" {
				if err == nil {
					_, err = versionfiles.Agreed(locs)
				}
				if err == nil || !strings.Contains(err.Error(), "1.0.0: "+tc.file) {
					t.Fatalf("err = %v, want the files to disagree with %s at 1.0.0", err, tc.file)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s and %q", err, tc.file, tc.want)
			}
		})
	}
}
