// Package cmdutil is what the command packages of lfp-swarm-lease share: the Factory that hands
// them their streams, environment, configuration and stores; the typed errors that choose an
// exit code; and the JSON and time formats every command prints.
package cmdutil
