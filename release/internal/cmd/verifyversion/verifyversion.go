// Package verifyversion is `release verify-version TAG`: release CI runs it before building,
// so a tag that does not name the version in the version files publishes nothing.
package verifyversion

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/release/internal/versionfiles"
)

// Options are the inputs of `release verify-version`.
type Options struct {
	// IO receives the verified version (Out).
	IO cmdutil.IOStreams
	// Dir is the repository's work tree.
	Dir string
	// Tag is the release tag, vX.Y.Z (refs/tags/ is accepted and dropped).
	Tag string
}

// NewCmdVerifyVersion returns the verify-version command. runF, when set, receives the options
// instead of verifyVersionRun (tests of argument parsing).
func NewCmdVerifyVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Dir: f.Dir}
	return &cobra.Command{
		Use:   "verify-version TAG",
		Short: "Check that TAG (vX.Y.Z) equals the version in every version file",
		Example: `  # in the release workflow, before anything is built
  release verify-version "$GITHUB_REF_NAME"

  release verify-version v0.2.0`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Tag = args[0]
			if runF != nil {
				return runF(opts)
			}
			if err := f.NeedRepository("verify-version"); err != nil {
				return err
			}
			return verifyVersionRun(opts)
		},
	}
}

func verifyVersionRun(opts *Options) error {
	tag := strings.TrimPrefix(opts.Tag, "refs/tags/")
	if !strings.HasPrefix(tag, "v") {
		return fmt.Errorf("verify-version: tag %q: a release tag is vX.Y.Z", opts.Tag)
	}
	v, err := semver.StrictNewVersion(strings.TrimPrefix(tag, "v"))
	if err != nil {
		return fmt.Errorf("verify-version: tag %q: a release tag is vX.Y.Z: %w", opts.Tag, err)
	}
	_, locs, err := versionfiles.Read(opts.Dir)
	if err != nil {
		return fmt.Errorf("verify-version: %w", err)
	}
	var wrong []string
	for _, l := range locs {
		if l.Version != v.String() {
			wrong = append(wrong, "  "+l.String())
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("verify-version: tag %s does not match these version files (run `bun run release` to make a release, which sets them all):\n%s", tag, strings.Join(wrong, "\n"))
	}
	_, err = fmt.Fprintln(opts.IO.Out, v.String())
	return err
}
