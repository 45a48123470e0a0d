package cmdutil

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// DocsAnnotation names, in a command's Annotations, the page of docs/ that tells more about it;
// a command without one points at its parent's.
const DocsAnnotation = "lfp-swarm-lease/docs"

// repositoryURL is where the docs pages are read outside a clone.
const repositoryURL = "https://github.com/regbo/lfp-swarm-lease/blob/main/"

// Help prints cmd's help as gh does, to fit a screen: what it does; USAGE; its COMMANDS; its
// FLAGS, each setting's with its variable and default (config.RegisterFlags), the etcd store's
// connection flags in one entry (config.FlagGroup); INHERITED FLAGS; EXAMPLES; LEARN MORE.
func Help(cmd *cobra.Command, _ []string) {
	w := cmd.OutOrStdout()
	about := cmp.Or(cmd.Long, cmd.Short)
	fmt.Fprintln(w, strings.TrimSpace(about))
	usage := cmd.UseLine()
	if !cmd.Runnable() && cmd.HasAvailableSubCommands() {
		usage = cmd.CommandPath() + " <command> [flags]"
	}
	section(w, "USAGE", "  "+usage)
	var commands []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			commands = append(commands, fmt.Sprintf("  %-12s %s", c.Name()+":", c.Short))
		}
	}
	section(w, "COMMANDS", strings.Join(commands, "\n"))
	own := pflag.NewFlagSet("own", pflag.ContinueOnError)
	var etcd []string
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		switch {
		case f.Hidden:
		case f.Annotations[config.FlagGroup] != nil:
			etcd = append(etcd, "--"+f.Name)
		default:
			own.AddFlag(f)
		}
	})
	flags := own.FlagUsages()
	if len(etcd) > 0 {
		flags += "      " + strings.Join(etcd[:len(etcd)/2], ", ") + ",\n      " + strings.Join(etcd[len(etcd)/2:], ", ") +
			": an etcd store's TLS, user and timeouts (" + config.EnvName(config.DefaultEnvPrefix, "etcd") + "_*)\n"
	}
	section(w, "FLAGS", flags)
	section(w, "INHERITED FLAGS", cmd.InheritedFlags().FlagUsages())
	section(w, "EXAMPLES", cmd.Example)
	section(w, "LEARN MORE", "  "+DocsPage(cmd)+" ("+repositoryURL+DocsPage(cmd)+")")
}

// section prints a titled section of help, unless body is empty.
func section(w io.Writer, title, body string) {
	if body = strings.TrimRight(body, "\n "); strings.TrimSpace(body) != "" {
		fmt.Fprintf(w, "\n%s\n%s\n", title, body)
	}
}

// DocsPage is the page of docs/ about cmd: its own, or its nearest parent's, else the README.
func DocsPage(cmd *cobra.Command) string {
	for c := cmd; c != nil; c = c.Parent() {
		if page := c.Annotations[DocsAnnotation]; page != "" {
			return page
		}
	}
	return "README.md"
}

// FlagError restates a flag the parser refused so that it says what to do: an unknown flag is
// answered with the closest flag cmd has (--ttl: --ttl-ms), and every refusal points at --help.
// It is a usage error (exit 2).
func FlagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if closest := settings.Closest(rest, names); closest != "" {
			return Usage(fmt.Errorf("unknown flag --%s: did you mean --%s? (%s --help lists the flags)", rest, closest, cmd.CommandPath()))
		}
	}
	return Usage(fmt.Errorf("%s (%s --help lists the flags)", msg, cmd.CommandPath()))
}
