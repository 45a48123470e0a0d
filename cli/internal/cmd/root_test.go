package cmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
)

// walk calls visit for every command below root that a user is shown (not hidden).
func walk(root *cobra.Command, visit func(*cobra.Command)) {
	for _, c := range root.Commands() {
		if c.Hidden {
			continue
		}
		visit(c)
		walk(c, visit)
	}
}

// TestEveryCommandHasAnExampleAndIsDocumented: each command's --help shows at least one example,
// every line of which runs the binary, and the README names the command, so that neither can
// fall behind a command added later.
func TestEveryCommandHasAnExampleAndIsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	app := &App{&cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: io.Discard, Err: io.Discard}}}
	var seen int
	walk(app.newRootCmd(), func(c *cobra.Command) {
		seen++
		path := c.CommandPath() // "lfp-swarm-lease elections create"
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no Example in its --help", path)
		} else {
			for _, line := range strings.Split(strings.TrimSpace(c.Example), "\n") {
				if line = strings.TrimSpace(line); line != "" && !strings.Contains(line, "lfp-swarm-lease ") {
					t.Errorf("%s: example %q does not run lfp-swarm-lease", path, line)
				}
			}
		}
		if c.Short == "" {
			t.Errorf("%s: no Short description", path)
		}
		if !strings.Contains(string(readme), path) {
			t.Errorf("%s: not in README.md", path)
		}
	})
	if seen < 10 {
		t.Fatalf("walked %d commands: the tree is not what the test expects", seen)
	}
}

// TestREADMESettingsTableNamesEveryFlag: the README's configuration table names, in a setting's
// row, the flag of every command that takes it (`run --listen`, `run`/`serve --listen`, or
// `--namespace` for the global flags), so that the table cannot fall behind the commands.
func TestREADMESettingsTableNamesEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // setting key → its table row
	for _, line := range strings.Split(string(readme), "\n") {
		if key, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " |"); ok && strings.HasPrefix(line, "| ") {
			rows[key] = line
		}
	}
	app := &App{&cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: io.Discard, Err: io.Discard}}}
	root := app.newRootCmd()
	check := func(where string, fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			key := strings.ReplaceAll(f.Name, "-", "_")
			if !slices.ContainsFunc(config.Settings, func(s config.Setting) bool { return s.Key == key }) {
				return // not a setting (--once, --json, …)
			}
			row, ok := rows[key]
			switch {
			case !ok:
				t.Errorf("setting %s has no row in README.md's configuration table", key)
			case where == "" && !strings.Contains(row, "`--"+f.Name+"`"):
				t.Errorf("README.md row of %s does not name the global flag `--%s`", key, f.Name)
			case where != "" && !strings.Contains(row, where+" --"+f.Name+"`") && !(strings.Contains(row, "`"+where+"`/") && strings.Contains(row, " --"+f.Name+"`")):
				t.Errorf("README.md row of %s does not name `%s --%s`", key, where, f.Name)
			}
		})
	}
	check("", root.PersistentFlags())
	walk(root, func(c *cobra.Command) {
		name := strings.TrimPrefix(c.CommandPath(), "lfp-swarm-lease ")
		check(name, c.LocalNonPersistentFlags())
		if c.HasPersistentFlags() {
			check(name, c.PersistentFlags())
		}
	})
}

// TestLongRunningCommandsTakeTheLogFlags: every command that runs until it is stopped logs
// through --log-format text|json and --log-level.
func TestLongRunningCommandsTakeTheLogFlags(t *testing.T) {
	app := &App{&cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: io.Discard, Err: io.Discard}}}
	root := app.newRootCmd()
	for _, path := range [][]string{{"run"}, {"serve"}, {"watch"}, {"elections", "watch"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		for _, flag := range []string{"log-format", "log-level"} {
			if c.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", c.CommandPath(), flag)
			}
		}
	}
}

// TestVersionFlag: --version prints the version line that `version` prints first, and exits 0.
func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	app := &App{&cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: &out, Err: io.Discard}}}
	if code := app.Run(context.Background(), []string{"--version"}); code != cmdutil.ExitOK || !strings.HasPrefix(out.String(), "lfp-swarm-lease ") ||
		!strings.Contains(out.String(), "commit ") {
		t.Fatalf("--version: exit %d, %q", code, out.String())
	}
}
