// Package config reads the deployer's settings (`deployer deploy` and `deployer remove`) with
// the settings kernel (the settings module), by the table of package settingtable.
//
// Every setting is a variable SWARM_LEASE_DEPLOY_<NAME>, or SWARM_LEASE_DEPLOY_<NAME>_FILE
// naming a file that holds the value (so that tokens need not sit in the environment or on a
// command line), and every setting that is not a secret is also a flag --<name>. The layers,
// from strongest to weakest:
//
//  1. flags;
//  2. the process environment (a variable or its _FILE);
//  3. the .env file (--env-file; default: .env at the repository root, when it exists), read
//     by settings.ParseDotEnv: a byte order mark is skipped, and a line that is not NAME=VALUE
//     is an error naming the file and the line, never its text;
//  4. the defaults of the table.
//
// A value and its _FILE form in the same place are an error (which one was meant is unknown),
// as is a _FILE that cannot be read or is empty; every trailing line end of a file is dropped
// (settings.ReadValueFile). An empty variable counts as unset. Unknown SWARM_LEASE_DEPLOY_*
// variables are warnings naming the closest setting, because a misspelt name would otherwise be
// silently ignored.
//
// Every problem of the settings is an *Error (exit 2) that names the setting as the user spells
// it, where its value came from and what to do, and all of them are reported in one run. The
// Portainer settings are checked here, before the client is built, so that no message speaks
// of the client's Go options; secrets are [portainer.Secret] values, which print redacted.
package config
