package versionfiles

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"golang.org/x/mod/modfile"
)

// Repo is the version files of one repository, read once.
type Repo struct {
	root     string
	files    map[string][]byte // path relative to root → content
	packages []string          // bun workspace directories
	pythons  []string          // pyproject.toml files of Python packages
	modules  []goModule
	work     *modfile.WorkFile
}

// Open reads the version files of the repository at root.
func Open(root string) (*Repo, error) {
	r := &Repo{root: root, files: map[string][]byte{}}
	rootPkgContent, err := r.read("package.json")
	if err != nil {
		return nil, err
	}
	rootPkg, err := parsePackageJSON("package.json", rootPkgContent)
	if err != nil {
		return nil, err
	}
	if r.packages, err = workspacePackages(root, rootPkg); err != nil {
		return nil, err
	}
	for _, dir := range r.packages {
		if _, err := r.read(packageJSONPath(dir)); err != nil {
			return nil, err
		}
	}
	if len(r.packages) > 0 {
		if _, err := r.read("bun.lock"); err != nil {
			return nil, err
		}
	}
	if r.pythons, err = pythonProjects(root); err != nil {
		return nil, err
	}
	for _, file := range r.pythons {
		if _, err := r.read(file); err != nil {
			return nil, err
		}
	}
	for _, f := range apiVersionFiles {
		if _, err := r.read(f.file); err != nil {
			return nil, err
		}
	}
	workContent, err := r.read("go.work")
	if err != nil {
		return nil, err
	}
	if r.work, err = parseGoWork(workContent); err != nil {
		return nil, err
	}
	for _, use := range r.work.Use {
		dir := path.Clean(filepath.ToSlash(use.Path))
		content, err := r.read(path.Join(dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		modPath := modfile.ModulePath(content)
		if modPath == "" {
			return nil, fmt.Errorf("versionfiles: %s/go.mod: no module line", dir)
		}
		r.modules = append(r.modules, goModule{Dir: dir, Path: modPath})
	}
	return r, nil
}

func (r *Repo) read(rel string) ([]byte, error) {
	content, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("versionfiles: %w", err)
	}
	r.files[rel] = content
	return content, nil
}

// Read opens the version files of the repository at root and returns their locations.
func Read(root string) (*Repo, []Location, error) {
	r, err := Open(root)
	if err != nil {
		return nil, nil, err
	}
	locs, err := r.Locations()
	if err != nil {
		return nil, nil, err
	}
	return r, locs, nil
}

// ModuleTagPrefixes returns, for every Go workspace module, the prefix of its release tags
// ("lease/" for lease/vX.Y.Z), sorted. A module at the repository root has the empty prefix.
func (r *Repo) ModuleTagPrefixes() []string {
	var prefixes []string
	for _, m := range r.modules {
		if m.Dir == "." {
			prefixes = append(prefixes, "")
			continue
		}
		prefixes = append(prefixes, m.tagPrefix())
	}
	slices.Sort(prefixes)
	return prefixes
}

// Locations returns every place that states the shared version.
func (r *Repo) Locations() ([]Location, error) {
	var locs []Location
	for _, file := range append([]string{"package.json"}, r.packageFiles()...) {
		p, err := parsePackageJSON(file, r.files[file])
		if err != nil {
			return nil, err
		}
		locs = append(locs, Location{File: file, What: "version", Version: *p.Version})
	}
	for _, dir := range r.packages {
		v, err := bunLockWorkspaceVersion(r.files["bun.lock"], dir)
		if err != nil {
			return nil, err
		}
		locs = append(locs, Location{File: "bun.lock", What: "workspace " + dir, Version: v})
	}
	for _, f := range r.rangedFiles() {
		v, err := versionAt(r.files[f.file], f.find)
		if err != nil {
			return nil, err
		}
		locs = append(locs, Location{File: f.file, What: f.what, Version: v})
	}
	workspace := workspaceModulePaths(r.modules)
	for _, m := range r.modules {
		reqs, err := goModRequirements(m, r.files[m.goModPath()], workspace)
		if err != nil {
			return nil, err
		}
		locs = append(locs, reqs...)
	}
	return append(locs, goWorkReplaces(r.work, workspace)...), nil
}

// rangedFiles are the Python projects' pyproject.toml files, then the API's version files.
func (r *Repo) rangedFiles() []rangedFile {
	var files []rangedFile
	for _, file := range r.pythons {
		find := func(content []byte) (int, int, error) { return pyprojectVersionLine(file, content) }
		files = append(files, rangedFile{file, "[project] version", find})
	}
	return append(files, apiVersionFiles...)
}

func (r *Repo) packageFiles() []string {
	files := make([]string, len(r.packages))
	for i, dir := range r.packages {
		files[i] = packageJSONPath(dir)
	}
	return files
}

// Change is the new content of one version file.
type Change struct {
	// File is the path relative to the repository root, with forward slashes.
	File string
	// Old and New are the file's content before and after.
	Old, New []byte
}

// SetVersion returns the changes that set every location to version (X.Y.Z, no "v"). Files
// already at that version are left out. Nothing is written.
func (r *Repo) SetVersion(version string) ([]Change, error) {
	v, err := semver.StrictNewVersion(version)
	if err != nil {
		return nil, fmt.Errorf("versionfiles: %q is not a version X.Y.Z: %w", version, err)
	}
	if v.Major() >= 2 {
		// The go command takes vN (N ≥ 2) only from a module whose path ends in /vN.
		return nil, fmt.Errorf("versionfiles: version %s: Go modules at major version 2 or higher need module paths ending in /v%d, which this repository's modules do not have; rename the modules first", version, v.Major())
	}
	var work *modfile.WorkFile
	next := map[string][]byte{}
	for _, file := range append([]string{"package.json"}, r.packageFiles()...) {
		next[file] = setPackageJSONVersion(r.files[file], version)
	}
	if len(r.packages) > 0 {
		lock := r.files["bun.lock"]
		for _, dir := range r.packages {
			var err error
			if lock, err = setBunLockWorkspaceVersion(lock, dir, version); err != nil {
				return nil, err
			}
		}
		next["bun.lock"] = lock
	}
	for _, f := range r.rangedFiles() {
		content, err := setVersionAt(r.files[f.file], f.find, version)
		if err != nil {
			return nil, err
		}
		next[f.file] = content
	}
	workspace := workspaceModulePaths(r.modules)
	for _, m := range r.modules {
		content, err := setGoModRequirements(m, r.files[m.goModPath()], workspace, version)
		if err != nil {
			return nil, err
		}
		next[m.goModPath()] = content
	}
	// The work file is parsed afresh so that r keeps describing the files on disk.
	work, err = parseGoWork(r.files["go.work"])
	if err != nil {
		return nil, err
	}
	next["go.work"] = setGoWorkReplaces(work, workspace, version)

	var changes []Change
	for file, content := range next {
		if !bytes.Equal(content, r.files[file]) {
			changes = append(changes, Change{File: file, Old: r.files[file], New: content})
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.File, b.File) })
	return changes, nil
}

// Apply writes the changes into the repository at root, keeping each file's mode.
func Apply(root string, changes []Change) error {
	for _, c := range changes {
		name := filepath.Join(root, filepath.FromSlash(c.File))
		info, err := os.Stat(name)
		if err != nil {
			return fmt.Errorf("versionfiles: %w", err)
		}
		if err := os.WriteFile(name, c.New, info.Mode().Perm()); err != nil {
			return fmt.Errorf("versionfiles: %w", err)
		}
	}
	return nil
}
