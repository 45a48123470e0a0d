package versionfiles

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// goModule is one module of the Go workspace.
type goModule struct {
	// Dir is the module's directory relative to the repository root, with forward slashes.
	Dir string
	// Path is the module path.
	Path string
}

func (m goModule) goModPath() string { return path.Join(m.Dir, "go.mod") }

// TagPrefix is the prefix of the module's tags: a module in a subdirectory is tagged
// DIR/vX.Y.Z, which is what the go command looks for.
func (m goModule) tagPrefix() string { return m.Dir + "/" }

func parseGoWork(content []byte) (*modfile.WorkFile, error) {
	wf, err := modfile.ParseWork("go.work", content, nil)
	if err != nil {
		return nil, fmt.Errorf("versionfiles: go.work: %w", err)
	}
	return wf, nil
}

func workspaceModulePaths(mods []goModule) []string {
	paths := make([]string, len(mods))
	for i, m := range mods {
		paths[i] = m.Path
	}
	return paths
}

// goModRequirements returns the requirements of one module's go.mod on the other workspace
// modules.
func goModRequirements(mod goModule, content []byte, workspace []string) ([]Location, error) {
	f, err := modfile.ParseLax(mod.goModPath(), content, nil)
	if err != nil {
		return nil, fmt.Errorf("versionfiles: %w", err)
	}
	var locs []Location
	for _, r := range f.Require {
		if slices.Contains(workspace, r.Mod.Path) {
			locs = append(locs, Location{File: mod.goModPath(), What: "require " + r.Mod.Path, Version: strings.TrimPrefix(r.Mod.Version, "v")})
		}
	}
	return locs, nil
}

func setGoModRequirements(mod goModule, content []byte, workspace []string, version string) ([]byte, error) {
	f, err := modfile.Parse(mod.goModPath(), content, nil)
	if err != nil {
		return nil, fmt.Errorf("versionfiles: %w", err)
	}
	for _, r := range f.Require {
		if slices.Contains(workspace, r.Mod.Path) {
			if err := f.AddRequire(r.Mod.Path, "v"+version); err != nil {
				return nil, fmt.Errorf("versionfiles: %s: %w", mod.goModPath(), err)
			}
		}
	}
	return modfile.Format(f.Syntax), nil
}

// goWorkReplaces returns go.work's versioned replace lines of workspace modules.
func goWorkReplaces(wf *modfile.WorkFile, workspace []string) []Location {
	var locs []Location
	for _, r := range wf.Replace {
		if slices.Contains(workspace, r.Old.Path) && r.Old.Version != "" {
			locs = append(locs, Location{File: "go.work", What: "replace " + r.Old.Path, Version: strings.TrimPrefix(r.Old.Version, "v")})
		}
	}
	return locs
}

func setGoWorkReplaces(wf *modfile.WorkFile, workspace []string, version string) []byte {
	for _, r := range wf.Replace {
		if !slices.Contains(workspace, r.Old.Path) || r.Old.Version == "" {
			continue
		}
		// The line's tokens are "OLD VERSION => NEW" inside a replace block and "replace OLD
		// VERSION => NEW" outside one; the version is the token after the old path.
		tokens := r.Syntax.Token
		for i := 0; i+1 < len(tokens); i++ {
			if tokens[i] == r.Old.Path {
				tokens[i+1] = "v" + version
				break
			}
		}
		r.Old.Version = "v" + version
	}
	return modfile.Format(wf.Syntax)
}
