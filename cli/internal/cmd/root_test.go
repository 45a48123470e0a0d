package cmd

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// update rewrites the golden help files and the generated part of docs/configuration.md.
var update = flag.Bool("update", false, "rewrite testdata/help and docs/configuration.md's exit codes")

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

// newRoot is the root command as the binary builds it, with discarded streams.
func newRoot() *cobra.Command {
	app := &App{&cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: io.Discard, Err: io.Discard}}}
	return app.newRootCmd()
}

// readDoc reads a file of the repository.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	content, err := os.ReadFile(filepath.Join("../../..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(content)
}

// TestEveryCommandHasAnExampleAndIsDocumented: each command's --help shows at least one example,
// every line of which runs the binary, and the page its LEARN MORE names exists and tells of
// the command, so that neither can fall behind a command added later.
func TestEveryCommandHasAnExampleAndIsDocumented(t *testing.T) {
	var seen int
	walk(newRoot(), func(c *cobra.Command) {
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
		name := strings.TrimPrefix(path, "lfp-swarm-lease ")
		if page := cmdutil.DocsPage(c); !strings.Contains(readDoc(t, page), name) {
			t.Errorf("%s: its page %s does not name %q", path, page, name)
		}
	})
	if seen < 10 {
		t.Fatalf("walked %d commands: the tree is not what the test expects", seen)
	}
}

// TestHelpFitsAScreen: every command's --help, as the binary prints it, is at most 40 lines
// with an example and a page to learn more, and is the golden file testdata/help/NAME.txt
// (go test -update rewrites them), so that a change to any help shows in review.
func TestHelpFitsAScreen(t *testing.T) {
	paths := [][]string{{}}
	walk(newRoot(), func(c *cobra.Command) {
		paths = append(paths, strings.Fields(strings.TrimPrefix(c.CommandPath(), "lfp-swarm-lease")))
	})
	for _, path := range paths {
		name := strings.Join(append([]string{"lfp-swarm-lease"}, path...), "_") // lfp-swarm-lease_elections_create
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			app := &App{&cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: &out, Err: &errOut}}}
			if code := app.Run(context.Background(), append(path, "--help")); code != 0 {
				t.Fatalf("--help: exit %d\n%s", code, errOut.String())
			}
			help := out.String()
			if n := strings.Count(help, "\n"); n > 40 {
				t.Errorf("--help is %d lines, more than a screen's 40", n)
			}
			for _, want := range []string{"\nUSAGE\n", "\nEXAMPLES\n  ", "\nLEARN MORE\n"} {
				if !strings.Contains(help, want) {
					t.Errorf("--help lacks %q:\n%s", strings.TrimSpace(want), help)
				}
			}
			golden := filepath.Join("testdata", "help", name+".txt")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if help != string(want) {
				t.Errorf("--help differs from %s (go test -update rewrites it after a deliberate change):\n%s", golden, help)
			}
		})
	}
}

// TestEveryFlagNamesItsVariable: the help of every setting's flag names the setting's variable,
// as the deployer's flags do.
func TestEveryFlagNamesItsVariable(t *testing.T) {
	walk(newRoot(), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			key := strings.ReplaceAll(f.Name, "-", "_")
			if slices.ContainsFunc(config.Settings, func(s config.Setting) bool { return s.Key == key }) &&
				!strings.Contains(f.Usage, config.EnvName(config.DefaultEnvPrefix, key)) {
				t.Errorf("%s --%s: help %q does not name %s", c.CommandPath(), f.Name, f.Usage, config.EnvName(config.DefaultEnvPrefix, key))
			}
		})
	})
}

// commandGroups are the names docs/configuration.md uses for groups of commands.
var commandGroups = map[string][]string{
	"one-shot": {"init", "try-acquire", "renew", "release", "inspect", "destroy"},
}

// TestDocsSettingsTableIsTheCode: docs/configuration.md has a row for every setting and for no
// other, naming its flag, exactly the commands that take the flag, its variable, its container
// label (none for a secret) and its default — so that the page cannot fall behind the code.
func TestDocsSettingsTableIsTheCode(t *testing.T) {
	rows := map[string][]string{} // setting key → its cells
	for _, line := range strings.Split(readDoc(t, "docs/configuration.md"), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if strings.HasPrefix(line, "| ") && len(cells) == 7 && cells[0] != "setting" && !strings.HasPrefix(cells[0], "---") {
			rows[cells[0]] = cells
		}
	}
	takes := map[string][]string{} // flag → the commands that take it
	walk(newRoot(), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			name := strings.Fields(c.CommandPath())[1] // elections for its subcommands
			if !slices.Contains(takes[f.Name], name) {
				takes[f.Name] = append(takes[f.Name], name)
			}
		})
	})
	for _, s := range config.Settings {
		cells, ok := rows[s.Key]
		if !ok {
			t.Errorf("docs/configuration.md has no row for setting %s", s.Key)
			continue
		}
		delete(rows, s.Key)
		flagCell, commandsCell, variable, label, def := cells[1], cells[2], cells[3], cells[4], cells[5]
		secret := s.Kind == settings.Secret
		var want []string
		for _, group := range []string{"one-shot"} {
			if strings.Contains(commandsCell, group) {
				want = append(want, commandGroups[group]...)
				commandsCell = strings.Replace(commandsCell, group, "", 1)
			}
		}
		for _, m := range regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(commandsCell, -1) {
			want = append(want, m[1])
		}
		got := takes[config.FlagName(s.Key)]
		if secret {
			got = want // no flag: the commands say who reads the variable
		}
		slices.Sort(want)
		slices.Sort(got)
		switch {
		case secret && !strings.HasPrefix(flagCell, "none") || !secret && flagCell != "`--"+config.FlagName(s.Key)+"`":
			t.Errorf("%s: flag %q, want `--%s` (none for a secret)", s.Key, flagCell, config.FlagName(s.Key))
		case !slices.Equal(got, want):
			t.Errorf("%s: the page says the commands %v take it, the code %v", s.Key, want, got)
		case !strings.Contains(variable, "`"+config.EnvName(config.DefaultEnvPrefix, s.Key)+"`"):
			t.Errorf("%s: variable %q, want %s", s.Key, variable, config.EnvName(config.DefaultEnvPrefix, s.Key))
		case secret && !strings.HasPrefix(label, "none") || !secret && label != "`"+config.LabelName(config.DefaultEnvPrefix, s.Key)+"`":
			t.Errorf("%s: label %q, want %s", s.Key, label, config.LabelName(config.DefaultEnvPrefix, s.Key))
		case s.Default != "" && !strings.Contains(def, s.Default):
			t.Errorf("%s: default %q, want it to say %s", s.Key, def, s.Default)
		}
	}
	for key := range rows {
		t.Errorf("docs/configuration.md has a row for %s, which is no setting", key)
	}
}

// TestDocsExitCodesAreTheCode: docs/configuration.md's exit codes are generated from
// cmdutil.ExitCodes (go test -update rewrites them).
func TestDocsExitCodesAreTheCode(t *testing.T) {
	const begin, end = "<!-- exit codes: generated", "<!-- end of exit codes -->"
	page := readDoc(t, "docs/configuration.md")
	i, j := strings.Index(page, begin), strings.Index(page, end)
	if i < 0 || j < i {
		t.Fatalf("docs/configuration.md has no %q … %q", begin, end)
	}
	i += strings.Index(page[i:], "\n") + 1
	var table strings.Builder
	table.WriteString("| code | `--json` code | meaning |\n| --- | --- | --- |\n")
	for _, c := range cmdutil.ExitCodes {
		var names []string
		for _, n := range c.Names {
			names = append(names, "`"+n+"`")
		}
		fmt.Fprintf(&table, "| %d | %s | %s |\n", c.Code, strings.Join(names, ", "), c.Meaning)
	}
	if *update {
		page = page[:i] + table.String() + page[j:]
		if err := os.WriteFile("../../../docs/configuration.md", []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		j = i + table.Len()
	}
	if got := page[i:j]; got != table.String() {
		t.Errorf("docs/configuration.md's exit codes differ from cmdutil.ExitCodes (go test -update rewrites them):\n%s\nwant:\n%s", got, table.String())
	}
}

// TestLongRunningCommandsTakeTheLogFlags: every command that runs until it is stopped logs
// through --log-format text|json and --log-level.
func TestLongRunningCommandsTakeTheLogFlags(t *testing.T) {
	root := newRoot()
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
