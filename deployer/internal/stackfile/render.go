package stackfile

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// topLevelVersion is the stack file's `version:` line. `docker stack deploy` needs it; the
// compose specification ignores it, and compose-go warns about it on the process's stderr
// through a global logger. The line is blanked, not deleted, so errors keep their line numbers.
var topLevelVersion = regexp.MustCompile(`(?m)^version:.*$`)

// Render reads the stack file (named file, for errors) with env as its only environment — as
// Portainer's `docker stack deploy` will — validates it against the compose specification, checks
// that every service's image is pinned to a digest, and returns the rendered stack: the file
// with every variable substituted.
func Render(ctx context.Context, name, file string, content []byte, env []portainer.EnvVar) ([]byte, error) {
	environment := types.Mapping{}
	for _, v := range env {
		environment[v.Name] = v.Value
	}
	details := types.ConfigDetails{
		WorkingDir:  ".",
		ConfigFiles: []types.ConfigFile{{Filename: file, Content: topLevelVersion.ReplaceAll(content, nil)}},
		Environment: environment,
	}
	project, err := loader.LoadWithContext(ctx, details, func(o *loader.Options) {
		o.SetProjectName(name, true)
		// The services' environment is the stack file's own; the deployer's machine has
		// nothing to add to it.
		o.SkipResolveEnvironment = true
	})
	if err != nil {
		return nil, fmt.Errorf("stack file %s is not a valid stack with these variables: %w", file, err)
	}
	names := project.ServiceNames()
	slices.Sort(names)
	for _, s := range names {
		image := project.Services[s].Image
		if !strings.Contains(image, "@sha256:") {
			return nil, fmt.Errorf("stack file %s: service %s's image %q is not pinned to a digest: its image must be ${DEMO_IMAGE}", file, s, image)
		}
	}
	out, err := project.MarshalYAML()
	if err != nil {
		return nil, fmt.Errorf("stack file %s: render: %w", file, err)
	}
	return out, nil
}
