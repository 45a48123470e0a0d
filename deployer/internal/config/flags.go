package config

import (
	"strconv"

	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// AddFlags adds a flag for every setting that is not a secret, and --env-file: deploy's.
func AddFlags(fs *pflag.FlagSet, envFile *string) {
	addFlags(fs, envFile, func(string) bool { return true })
}

// removeSettings are the settings remove uses: where Portainer is, how to sign in, and which
// stack on which endpoint. The images, the lease and the demo's port are deploy's alone.
var removeSettings = map[string]bool{
	"portainer_url": true, "portainer_username": true, "portainer_ca_file": true, "portainer_insecure_skip_verify": true,
	"endpoint": true, "stack_name": true,
}

// AddRemoveFlags adds the flags of remove: those of the settings it uses, and --env-file.
func AddRemoveFlags(fs *pflag.FlagSet, envFile *string) {
	addFlags(fs, envFile, func(key string) bool { return removeSettings[key] })
}

func addFlags(fs *pflag.FlagSet, envFile *string, use func(key string) bool) {
	fs.StringVar(envFile, "env-file", "", "read settings from this file (default: .env at the repository root, when it exists)")
	for _, s := range schema.Settings {
		name := flagName(s)
		if name == "" || !use(s.Key) {
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
