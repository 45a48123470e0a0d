// Package config reads the deployer's settings (`deployer deploy` and `deployer remove`).
//
// Every setting is a variable SWARM_LEASE_DEPLOY_<NAME>, or SWARM_LEASE_DEPLOY_<NAME>_FILE
// naming a file that holds the value (so that tokens need not sit in the environment or on a
// command line), and every setting that is not a secret is also a flag --<name>. The layers,
// from strongest to weakest:
//
//  1. flags;
//  2. the process environment;
//  3. the process environment's *_FILE variables;
//  4. the .env file (--env-file; default: .env at the repository root, when it exists);
//  5. the .env file's *_FILE variables;
//  6. the defaults in [Settings].
//
// A value and its _FILE form in the same layer are an error (which one was meant is unknown),
// as is a _FILE that cannot be read or is empty; one trailing newline of a file is dropped.
// Unknown SWARM_LEASE_DEPLOY_* variables are warnings naming the closest setting, because a
// misspelt name would otherwise be silently ignored. Every error names the setting, where its
// value came from and what to do. Secrets are [portainer.Secret] values, which print redacted.
package config
