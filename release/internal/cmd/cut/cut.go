// Package cut is `release cut [patch|minor|major] [--dry-run]`: it bumps the one
// shared version in every version file, runs the release tests, commits, tags the release and
// every Go module (so `go install …@vX.Y.Z` resolves), and pushes commit and tags in one atomic
// push, so the upstream never has a tag without its commit or the other way round.
package cut

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/gitrun"
	"github.com/regbo/lfp-swarm-lease/release/internal/versionfiles"
)

// DefaultTestCommand is the release tests, run from the repository root with the new version
// as its argument after the version files are rewritten and before anything is committed.
var DefaultTestCommand = []string{"scripts/release-check.sh"}

// Options are the inputs of `release cut`.
type Options struct {
	// IO receives the plan and progress (ErrOut) and the released version (Out).
	IO cmdutil.IOStreams
	// Dir is the repository's work tree.
	Dir string
	// Git runs git in Dir.
	Git gitrun.Runner
	// Now is the clock; the tag message carries the release date.
	Now func() time.Time
	// RunTests runs the release tests with the version files at version (X.Y.Z).
	RunTests func(ctx context.Context, version string) error

	// Level is patch, minor or major.
	Level string
	// DryRun prints every step and changes nothing.
	DryRun bool
}

// NewCmdCut returns the cut command. runF, when set, receives the options instead of cutRun
// (tests of argument parsing).
func NewCmdCut(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Dir: f.Dir, Git: f.Git, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "cut [patch|minor|major]",
		Short: "Bump the shared version, commit, tag and push the release",
		Long: `Bumps the one shared version (default: patch) in every version file: the root and
workspace package.json files, bun.lock, the Python packages' pyproject.toml, the Go modules'
requirements on each other and go.work's replace lines. Refuses a dirty tree and a branch behind its upstream (it fetches
first). Runs the release tests, commits the version files, creates the annotated tag vX.Y.Z
and one tag DIR/vX.Y.Z per Go module, and pushes commit and tags with git push --atomic.
--dry-run prints every step with the versions and changes nothing.`,
		Example: `  # every step with the versions it would write, changing nothing
  release cut minor --dry-run

  # bump the patch version, run the release tests, tag and push
  release cut`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Level = "patch"
			if len(args) == 1 {
				opts.Level = args[0]
			}
			if opts.RunTests == nil {
				opts.RunTests = func(ctx context.Context, version string) error {
					return runCommand(ctx, opts, append(DefaultTestCommand, version))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			if err := f.NeedRepository("cut"); err != nil {
				return err
			}
			return cutRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print every step with the versions and change nothing")
	return cmd
}

func runCommand(ctx context.Context, opts *Options, argv []string) error {
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Dir, c.Stdout, c.Stderr, c.Env = opts.Dir, opts.IO.ErrOut, opts.IO.ErrOut, os.Environ()
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return nil
}

// bump returns the version after v at level.
func bump(v *semver.Version, level string) (semver.Version, error) {
	switch level {
	case "patch":
		return v.IncPatch(), nil
	case "minor":
		return v.IncMinor(), nil
	case "major":
		return v.IncMajor(), nil
	}
	return semver.Version{}, fmt.Errorf("cut: level %q: use patch, minor or major (default patch)", level)
}

// upstream is where the branch pushes.
type upstream struct {
	branch, remote, mergeRef string
}

func findUpstream(ctx context.Context, git gitrun.Runner) (upstream, error) {
	branch, err := git.Git(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return upstream{}, fmt.Errorf("cut: HEAD is not on a branch: check out the branch to release")
	}
	remote, errRemote := git.Git(ctx, "config", "--get", "branch."+branch+".remote")
	mergeRef, errMerge := git.Git(ctx, "config", "--get", "branch."+branch+".merge")
	if errRemote != nil || errMerge != nil || remote == "" || remote == "." || mergeRef == "" {
		return upstream{}, fmt.Errorf("cut: branch %q has no upstream on a remote: set one with `git push -u REMOTE %s` or `git branch --set-upstream-to REMOTE/BRANCH`", branch, branch)
	}
	return upstream{branch: branch, remote: remote, mergeRef: mergeRef}, nil
}

func cutRun(ctx context.Context, opts *Options) error {
	step := func(format string, args ...any) {
		prefix := "release: "
		if opts.DryRun {
			prefix = "release (dry run): "
		}
		fmt.Fprintf(opts.IO.ErrOut, prefix+format+"\n", args...)
	}
	if _, err := bump(semver.New(0, 0, 0, "", ""), opts.Level); err != nil {
		return err
	}
	git := opts.Git

	status, err := git.Git(ctx, "status", "--porcelain", "--untracked-files=normal")
	if err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	if status != "" {
		return fmt.Errorf("cut: the work tree is not clean; commit or stash these first:\n%s", status)
	}
	up, err := findUpstream(ctx, git)
	if err != nil {
		return err
	}

	// A dry run must not move remote-tracking refs, so it asks the remote for its branch head
	// instead of fetching; a release fetches, which also brings the remote's tags.
	var remoteHead string
	if opts.DryRun {
		step("would fetch %s; asking it for %s instead", up.remote, up.mergeRef)
		out, err := git.Git(ctx, "ls-remote", "--exit-code", up.remote, up.mergeRef)
		if err != nil {
			return fmt.Errorf("cut: upstream %s %s: %w", up.remote, up.mergeRef, err)
		}
		remoteHead, _, _ = strings.Cut(out, "\t")
	} else {
		step("fetching %s", up.remote)
		if _, err := git.Git(ctx, "fetch", "--tags", up.remote); err != nil {
			return fmt.Errorf("cut: %w", err)
		}
		if remoteHead, err = git.Git(ctx, "rev-parse", "--verify", "@{upstream}^{commit}"); err != nil {
			return fmt.Errorf("cut: the upstream of %q: %w", up.branch, err)
		}
	}
	// Behind: the upstream has a commit HEAD does not contain (an unknown object counts, as in
	// a dry run that did not fetch it).
	if _, err := git.Git(ctx, "merge-base", "--is-ancestor", remoteHead, "HEAD"); err != nil {
		return fmt.Errorf("cut: branch %q is behind its upstream %s (%s): pull and check the result first", up.branch, up.remote, up.mergeRef)
	}

	repo, locs, err := versionfiles.Read(opts.Dir)
	if err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	current, err := versionfiles.Agreed(locs)
	if err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	next, err := bump(current, opts.Level)
	if err != nil {
		return err
	}
	version := next.String()
	tags := []string{"v" + version}
	for _, prefix := range repo.ModuleTagPrefixes() {
		if prefix != "" {
			tags = append(tags, prefix+"v"+version)
		}
	}
	for _, tag := range tags {
		if _, err := git.Git(ctx, "rev-parse", "--quiet", "--verify", "refs/tags/"+tag); err == nil {
			return fmt.Errorf("cut: tag %s exists already; the next %s version after %s is taken: choose another level or delete the stray tag", tag, opts.Level, current)
		}
		if out, err := git.Git(ctx, "ls-remote", "--tags", up.remote, "refs/tags/"+tag); err != nil {
			return fmt.Errorf("cut: %w", err)
		} else if out != "" {
			return fmt.Errorf("cut: tag %s exists on %s already: choose another level or delete the stray tag there", tag, up.remote)
		}
	}

	changes, err := repo.SetVersion(version)
	if err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	step("%s release: %s → %s on branch %s (upstream %s %s)", opts.Level, current, version, up.branch, up.remote, up.mergeRef)
	files := make([]string, len(changes))
	for i, c := range changes {
		files[i] = c.File
		step("set %s to %s", c.File, version)
	}
	step("run the release tests: %s", strings.Join(append(DefaultTestCommand, version), " "))
	step("commit %s", strings.Join(files, " "))
	step("create annotated tags %s", strings.Join(tags, " "))
	refspecs := []string{"HEAD:" + up.mergeRef}
	for _, tag := range tags {
		refspecs = append(refspecs, "refs/tags/"+tag)
	}
	step("git push --atomic %s %s", up.remote, strings.Join(refspecs, " "))
	if opts.DryRun {
		step("nothing changed")
		return nil
	}

	if err := versionfiles.Apply(opts.Dir, changes); err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	if err := opts.RunTests(ctx, version); err != nil {
		// The tree was clean before, so putting the files back loses nothing.
		if _, restoreErr := git.Git(ctx, append([]string{"checkout", "--"}, files...)...); restoreErr != nil {
			return fmt.Errorf("cut: the release tests failed (%w), and restoring the version files failed too: %v", err, restoreErr)
		}
		return fmt.Errorf("cut: the release tests failed; the version files are restored: %w", err)
	}
	if _, err := git.Git(ctx, append([]string{"add", "--"}, files...)...); err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	if _, err := git.Git(ctx, "commit", "--quiet", "-m", "Release v"+version); err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	date := opts.Now().UTC().Format("2006-01-02")
	for _, tag := range tags {
		if _, err := git.Git(ctx, "tag", "--annotate", "--message", fmt.Sprintf("lfp-swarm-lease v%s (%s)", version, date), tag); err != nil {
			return fmt.Errorf("cut: %w", err)
		}
	}
	if _, err := git.Git(ctx, append([]string{"push", "--atomic", "--quiet", up.remote}, refspecs...)...); err != nil {
		return fmt.Errorf("cut: the commit and tags are made here but not pushed (push them with `git push --atomic %s %s`): %w", up.remote, strings.Join(refspecs, " "), err)
	}
	step("pushed v%s", version)
	fmt.Fprintln(opts.IO.Out, "v"+version)
	return nil
}
