// Package settings is what the lfp-swarm-lease CLI and the deployer share in reading their
// settings. Today that is one rule, [ReadFile], for every file a setting names: the file of a
// <VAR>_FILE variable (a mounted secret), the deployer's .env and its CA bundle.
//
// The rule exists because such a path comes from the user and may name anything: /dev/zero or
// a log file would fill memory if read whole, and a named pipe would block the process in
// open(2), where no signal reaches it (the programs handle SIGTERM and SIGINT themselves, to
// shut down in order, so the default action of a signal never applies). A file that a setting
// names must therefore be a regular file (or a symbolic link to one) no larger than its
// reader's limit; anything else is refused at once, before a byte is read.
//
// The package is a module of its own, required by both programs' modules, so that the rule is
// written once; the programs' settings layers are to move here too.
package settings
