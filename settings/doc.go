// Package settings is the settings kernel of the lfp-swarm-lease CLI and the deployer: how a
// program's settings are named, read from their layers, merged, typed and traced to where each
// value came from. Each program keeps its table of settings (a [Schema]), its checks of the
// values and the wording of its messages; what they share is written here once.
//
// # Layers
//
// A [Layer] is what one place gives, read with koanf's providers where koanf has one:
//
//   - [Schema.Defaults]: the settings' defaults;
//   - [Schema.Labels]: a container's labels, lower(prefix).key (the CLI's Swarm task);
//   - [Schema.DotEnv]: a .env file's PREFIX_* lines (the deployer's --env-file), parsed by
//     [ParseDotEnv], which names a bad line by its number and never quotes it;
//   - [Schema.Environment]: the process environment's PREFIX_* variables (koanf's env/v2
//     provider);
//   - [Schema.Flags]: the flags the user gave (koanf's posflag provider), with their types.
//
// In the environment and in a .env file every setting KEY is the variable PREFIX_KEY, or
// PREFIX_KEY_FILE naming a file that holds the value ([ReadValueFile]: a mounted secret). Both
// in one place is a [*ConflictError]; a file that gives no value a [*ValueFileError]. Other
// PREFIX_* variables draw one warning each from [Schema.Warnings], naming the closest setting.
//
// [Schema.Merge] merges layers, weakest first, with koanf, reading each value by its setting's
// [Kind] (a [*ValueError] names a value that is not of it and its source); [Values.Unmarshal]
// decodes the result into a program's typed options, and [Values.Source] says where any value
// came from — "flag --ttl-ms", "environment variable SWARM_LEASE_TTL_MS", "file /run/secrets/ttl
// named by SWARM_LEASE_TTL_MS_FILE", "/repo/.env line 4 (SWARM_LEASE_DEPLOY_REPLICAS)",
// "container label swarm-lease.ttl_ms", "default" — for the messages that name a setting.
//
// # Files that settings name
//
// [ReadFile] is the rule for every file a setting names: the file of a <VAR>_FILE variable,
// the deployer's .env and its CA bundle. Such a path comes from the user and may name
// anything: /dev/zero or a log file would fill memory if read whole, and a named pipe would
// block the process in open(2), where no signal reaches it (the programs handle SIGTERM and
// SIGINT themselves, to shut down in order, so the default action of a signal never applies).
// A file that a setting names must therefore be a regular file (or a symbolic link to one) no
// larger than its reader's limit; anything else is refused at once, before a byte is read.
//
// The package is a module of its own, required by both programs' modules, so that all this is
// written once.
package settings
