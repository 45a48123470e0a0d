package config

import (
	"strconv"

	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// AddFlags adds a flag for every setting that is not a secret, and --env-file.
func AddFlags(fs *pflag.FlagSet, envFile *string) {
	fs.StringVar(envFile, "env-file", "", "read settings from this file (default: .env at the repository root, when it exists)")
	for _, s := range schema.Settings {
		name := flagName(s)
		if name == "" {
			continue
		}
		usage := s.Help + " (" + variable(s.Key) + ")"
		// A flag's default only shows in --help: the flag layer keeps the flags the user set,
		// so a default never hides the environment or .env.
		switch s.Kind {
		case settings.Switch:
			fs.Bool(name, s.Default == "true", usage)
		case settings.Number:
			n, err := strconv.Atoi(s.Default)
			if err != nil && s.Default != "" {
				panic("config: setting " + s.Key + " has a default that is not a number: " + s.Default)
			}
			fs.Int(name, n, usage)
		default:
			fs.String(name, s.Default, usage)
		}
	}
}
